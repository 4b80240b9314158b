'use strict';
// What every JavaScript adapter shares: the pipe protocol (docs/pipe-protocol.md) on stdin and
// stdout, the stream's bytes kept until `close`, and a `fetch` that answers the library's one
// request with those bytes, one read per transport chunk, as the provider emulator does over
// HTTP (harness/connect/adapters/base.py). The library runs the way its users run it; what
// their code would get is turned into results in the contract's shape (docs/contract.md).
//
// So every result comes out at `close`: no adapter exposes release timing ("incremental").
// Each adapter declares what else it exposes, never what its library means to do:
//   - a call the library hands back for the caller to run is `ready`, whatever its text;
//   - what the library itself sets apart as invalid is `rejected`;
//   - an error that is the library's own refusal of the stream (its error class, thrown or
//     reported where its users read it) rejects the calls it cut short;
//   - any other exception is answered as an error: the harness records the library's crash.

const readline = require('node:readline');
const path = require('node:path');
const fs = require('node:fs');

const PROTOCOL_VERSION = 1;
const MESSAGES = [{ role: 'user', content: 'Call the tools.' }];
const MODEL = 'callstream';
const BASE_URL = 'http://127.0.0.1:9/v1'; // never dialled: `fetch` answers every request

/** The installed version of `pkg`, read from its package.json. */
function versionOf(pkg) {
  const file = path.join(__dirname, '..', 'node_modules', ...pkg.split('/'), 'package.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

/** A `fetch` that answers any request with `chunks` as a 200 event stream, one read each, and
 * keeps the request body it was sent in `requests` (tests read what the library asked). */
function servingFetch(chunks, requests = []) {
  return async (url, init) => {
    requests.push({ url: String(url), body: init && init.body ? String(init.body) : null });
    let next = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (next < chunks.length) controller.enqueue(new Uint8Array(chunks[next++]));
        else controller.close();
      },
    });
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
    });
  };
}

/** A result in the contract's shape: `ready` unless `rejected` names why; `detail` says in the
 * library's words what refused it. */
function callResult(choice, index, id, name, text, { rejected = null, arguments: args = null, kind, detail } = {}) {
  const result = {
    choice,
    index,
    id: id === undefined ? null : id,
    name: name === undefined ? null : name,
    arguments_text: text === undefined ? null : text,
    arguments: rejected === null ? (args === undefined ? null : args) : null,
    status: rejected === null ? 'ready' : 'rejected',
    reason: rejected,
  };
  if (kind) result.kind = kind;
  if (detail) result.detail = detail;
  return result;
}

/** The tools of a `run` request as chat-completions function tools (a custom tool offered as a
 * function of the same name, for a library that declares no custom tool). */
function functionTools(tools) {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, parameters: tool.parameters || { type: 'object', properties: {} } },
  }));
}

const NONCE = `\u0000callstream-${process.pid}-${Date.now()}:`;

/** `value` as one JSON line, numbers JSON cannot spell (a library's parse of `1e400` is
 * Infinity) written as the `Infinity`, `-Infinity` and `NaN` tokens Python's json reads, where
 * JSON.stringify would write `null` and so change what the library handed back. */
function exactJSON(value) {
  if (!hasNonFinite(value)) return JSON.stringify(value); // a replacer costs stack depth
  const text = JSON.stringify(value, (_key, v) =>
    typeof v === 'number' && !Number.isFinite(v) ? NONCE + String(v) : v,
  );
  const marked = JSON.stringify(NONCE).slice(1, -1);
  return text.split(`"${marked}`).map((part, i) => (i === 0 ? part : part.replace(/^(-?Infinity|NaN)"/, '$1'))).join('');
}

/** Whether a number JSON cannot spell is anywhere in `value`, walked without recursion, so a
 * deeply nested parse the library handed back is no deeper a problem here than for it. */
function hasNonFinite(value) {
  const pending = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'number' && !Number.isFinite(v)) return true;
    if (v && typeof v === 'object') for (const key of Object.keys(v)) pending.push(v[key]);
  }
  return false;
}

/** Serve the protocol for `adapter`: `{name, packages, observables, assemble(chunks, tools)}`,
 * `assemble` resolving to the results of one whole stream. */
function serve(adapter) {
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let stream = null;
  const write = (message) => process.stdout.write(exactJSON(message) + '\n');
  const queue = [];
  let busy = false;
  async function handle(line) {
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      write({ seq: null, error: { message: `not JSON: ${error.message}`, traceback: '' } });
      return;
    }
    const seq = request.seq === undefined ? null : request.seq;
    try {
      switch (request.cmd) {
        case 'start':
          write({
            version: PROTOCOL_VERSION,
            implementation: {
              name: adapter.name,
              version: adapter.packages.map((p) => `${p} ${versionOf(p)}`).join(', '),
              language: 'javascript',
              language_version: `node ${process.version}`,
              dialects: adapter.dialects || ['openai-chat'],
              profile: 'lenient',
              observables: adapter.observables,
            },
          });
          return;
        case 'run':
          stream = { tools: request.tools || [], dialect: request.dialect, chunks: [] };
          write({ seq, ok: true });
          return;
        case 'feed':
          stream.chunks.push(Buffer.from(request.data, 'base64'));
          write({ seq, results: [] });
          return;
        case 'close': {
          const { chunks, tools, dialect } = stream;
          stream = null;
          const results = await adapter.assemble(chunks, tools, dialect);
          write({ seq, results, findings: [] });
          return;
        }
        case 'stop':
          process.exit(0);
          return;
        default:
          throw new Error(`unknown command ${JSON.stringify(request.cmd)}`);
      }
    } catch (error) {
      const message = error && error.stack ? String(error) : `thrown: ${JSON.stringify(error)}`;
      write({ seq, error: { message, traceback: (error && error.stack) || '' } });
    }
  }
  async function drain() {
    if (busy) return;
    busy = true;
    while (queue.length) await handle(queue.shift());
    busy = false;
  }
  input.on('line', (line) => {
    if (!line.trim()) return;
    queue.push(line);
    drain();
  });
  input.on('close', () => {
    const wait = () => (busy || queue.length ? setTimeout(wait, 5) : process.exit(0));
    wait();
  });
}

module.exports = { BASE_URL, MESSAGES, MODEL, callResult, functionTools, serve, servingFetch, versionOf };
