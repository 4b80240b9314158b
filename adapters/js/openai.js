#!/usr/bin/env node
'use strict';
// openai-node as a pipe adapter: `cmd:node adapters/js/openai.js`.
//
// The user code path of the SDK's helpers.md ("Chat Completions API", `.stream()`):
//
//   const stream = client.chat.completions.stream({ model, messages, tools });
//   stream.on('content', …);                        // text shown as it comes
//   const completion = await stream.finalChatCompletion();
//   for (const call of completion.choices[0].message.tool_calls ?? []) run(call);
//
// Paths are in the installed package (node_modules/openai/lib/ChatCompletionStream.js).
// `#accumulateChatCompletion` folds each chunk into a snapshot; `finalizeChatCompletion`
// turns it into the final completion and throws `OpenAIError` where the snapshot is not a
// completion it will hand back ("missing finish_reason for choice 0", "missing
// choices[0].tool_calls[0].function.name", "invalid tool call index", …). It refuses a
// `length` or `content_filter` finish (`LengthFinishReasonError`…) only for strict or
// auto-parseable tools; the plain tools most users declare, offered here, get the call back.
// An error payload inside the stream throws `APIError`.
//
// Observables (the trust rules, docs/contract.md): every call handed back is `ready` with its
// id, its text and its choice; a refusal is one of the SDK's own error classes, which rejects
// every call of the snapshot it stopped at. The SDK gives no parse of the arguments (the
// caller's JSON.parse is no part of it) and no machine-readable reason: most refusals are one
// class, `OpenAIError`, told apart only by message, so `reason` is not observable. An
// exception of any other class (a TypeError in the fold, which the runner wraps in an
// OpenAIError whose `cause` it is) is the library's crash.

const OpenAI = require('openai');
const { ContentFilterFinishReasonError, LengthFinishReasonError } = require('openai/error');
const { BASE_URL, MESSAGES, MODEL, callResult, serve, servingFetch } = require('./lib/pipe');

/** The tools of a `run` as chat-completions tools: functions, and custom tools with format. */
function openaiTools(tools) {
  return tools.map((tool) =>
    tool.type === 'custom'
      ? { type: 'custom', custom: tool.format ? { name: tool.name, format: tool.format } : { name: tool.name } }
      : {
          type: 'function',
          function: { name: tool.name, parameters: tool.parameters || { type: 'object', properties: {} } },
        },
  );
}

/** The calls of each choice of a completion (final or snapshot): [choice, index, call], each
 * choice's calls numbered by first appearance in the stream (D16: the SDK lists them by wire
 * index, holes included, `firstSeen` maps "choice/wire index" to its order of appearance). */
function callsOf(completion, firstSeen) {
  const found = [];
  for (const choice of (completion && completion.choices) || []) {
    if (!choice || !choice.message) continue;
    const message = choice.message;
    const order = (wire) => firstSeen.get(`${choice.index}/${wire}`) ?? Number.MAX_SAFE_INTEGER;
    const calls = Object.entries(message.tool_calls || [])
      .filter(([, call]) => call)
      .sort(([a], [b]) => order(a) - order(b) || Number(a) - Number(b))
      .map(([, call]) => call);
    calls.forEach((call, index) => found.push([choice.index, index, call]));
    if (message.function_call) found.push([choice.index, calls.length, { function: message.function_call, id: null }]);
  }
  return found;
}

function result(choice, index, call, rejected, detail) {
  if (call.type === 'custom') {
    const custom = call.custom || {};
    return callResult(choice, index, call.id, custom.name, custom.input, { rejected, arguments: custom.input, kind: 'custom', detail });
  }
  const fn = call.function || {};
  return callResult(choice, index, call.id, fn.name, fn.arguments, { rejected, detail });
}

async function assemble(chunks, tools) {
  const client = new OpenAI({ apiKey: 'callstream', baseURL: BASE_URL, maxRetries: 0, fetch: servingFetch(chunks) });
  const request = { model: MODEL, messages: MESSAGES };
  if (tools.length) request.tools = openaiTools(tools);
  const stream = client.chat.completions.stream(request);
  let snapshot = null;
  const firstSeen = new Map();
  stream.on('chunk', (chunk, current) => {
    snapshot = current;
    for (const choice of chunk.choices || []) {
      for (const delta of (choice.delta && choice.delta.tool_calls) || []) {
        const key = `${choice.index}/${delta.index}`;
        if (!firstSeen.has(key)) firstSeen.set(key, firstSeen.size);
      }
    }
  });
  stream.on('error', () => {}); // finalChatCompletion() rejects with it
  try {
    const completion = await stream.finalChatCompletion();
    return callsOf(completion, firstSeen).map(([choice, index, call]) => result(choice, index, call, null));
  } catch (error) {
    if (!(error instanceof OpenAI.OpenAIError) || error instanceof OpenAI.APIConnectionError) throw error;
    // The stream's runner wraps any other error in an OpenAIError, keeping it as the cause
    // (EventStream's #handleError): a TypeError inside the fold is still the SDK's crash.
    if (error.cause instanceof Error && !(error.cause instanceof OpenAI.OpenAIError)) throw error.cause;
    const reason = error instanceof LengthFinishReasonError ? 'truncated'
      : error instanceof ContentFilterFinishReasonError ? 'filtered'
      : error instanceof OpenAI.APIError ? 'stream_error' : 'protocol_error';
    return callsOf(snapshot, firstSeen).map(([choice, index, call]) => result(choice, index, call, reason, `${error.constructor.name}: ${error.message}`));
  }
}

serve({
  name: 'openai-node',
  packages: ['openai'],
  observables: ['status', 'arguments_text', 'ids', 'choices'],
  assemble,
});
