#!/usr/bin/env node
'use strict';
// A streamed tool-call assembler for OpenAI Chat Completions streams, in plain Node.js (no
// dependencies), and its adapter for callstream's pipe protocol (docs/pipe-protocol.md).
//
//   node assembler.js            speaks the protocol on stdin/stdout, lenient profile
//   node assembler.js --strict   the same under the strict profile
//
// Theory of operation. Bytes go through an incremental UTF-8 decoder (TextDecoder with
// stream: true carries a multi-byte character split across chunks; the first BOM is dropped)
// and a WHATWG event-stream line decoder (CR, LF or CRLF, a CRLF split across chunks is one
// line ending, comments ignored, one space after the colon dropped, data lines joined with LF,
// a blank line dispatches). Each event's JSON chunk is routed per (choice, tool-call index) to a
// call slot; identity fields are set, never concatenated; argument fragments are appended
// verbatim. A call is final exactly once: when its choice's finish_reason arrives (completing
// calls are parsed once and checked against the tool's schema), or when the stream ends or
// fails (rejected with the reason). The lenient profile normalises the known deviations of real
// servers and records each as a finding (quirk id); the strict profile rejects the calls that
// the quirk table says it must.

const { compile } = require('./schema');

const PROTOCOL_VERSION = 1;

// -- results ------------------------------------------------------------------------------------

const Reason = {
  TRUNCATED: 'truncated',
  FILTERED: 'filtered',
  PROVIDER_FINISH: 'provider_finish',
  STREAM_ERROR: 'stream_error',
  UNFINISHED: 'unfinished',
  INTERRUPTED: 'interrupted',
  MALFORMED_JSON: 'malformed_json',
  SCHEMA_VIOLATION: 'schema_violation',
  UNKNOWN_TOOL: 'unknown_tool',
  MISSING_ID: 'missing_id',
  MISSING_NAME: 'missing_name',
  TOO_LARGE: 'too_large',
  PROTOCOL_ERROR: 'protocol_error',
};

// Quirks the strict profile rejects (with this reason); every other quirk is only recorded.
const STRICT_REJECTS = {
  C1: Reason.PROTOCOL_ERROR,
  C2: Reason.PROTOCOL_ERROR,
  C3: Reason.PROTOCOL_ERROR,
  C6: Reason.PROTOCOL_ERROR,
  C7: Reason.MISSING_ID,
  C14: Reason.PROTOCOL_ERROR,
  C32: Reason.PROTOCOL_ERROR,
};

const DEFAULT_LIMITS = {
  max_argument_bytes: 1 << 20,
  max_calls: 128,
  max_choices: 128,
  max_line_length: 8 << 20,
  max_event_size: 8 << 20,
};

// Raised inside when the whole stream can no longer be trusted; never leaves the Assembler.
class StreamFailure extends Error {
  constructor(reason, detail) {
    super(detail);
    this.reason = reason;
    this.detail = detail;
  }
}

// -- JSON values, with the truthiness the reference gives them ([] and {} are false) ------------

function has(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function get(object, key) {
  return has(object, key) ? object[key] : null;
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function truthy(value) {
  if (value === null || value === undefined || value === false || value === 0 || value === '') {
    return false;
  }
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function same(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => has(b, k) && same(a[k], b[k]));
}

// White space as the reference strips it around [DONE] (Unicode spaces, not the BOM).
const SPACE = /^[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

function clip(value, limit = 120) {
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined) text = String(value);
  return JSON.stringify(text.length <= limit ? text : text.slice(0, limit) + '…');
}

const SURROGATE = /[\ud800-\udfff]/;

// Characters as the limits count them: code points, not UTF-16 units.
function codePoints(text) {
  if (!SURROGATE.test(text)) return text.length;
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function utf8Length(text) {
  return Buffer.byteLength(text, 'utf8');
}

// -- the event-stream decoder -------------------------------------------------------------------

class SSELimitError extends Error {
  constructor(message, offset) {
    super(message);
    this.offset = offset;
    this.events = []; // events the same feed() completed before the limit was passed
  }
}

class SSEDecoder {
  constructor(maxLineLength, maxEventSize) {
    this.text = new TextDecoder('utf-8'); // replaces invalid bytes with U+FFFD, drops one BOM
    this.strict = new TextDecoder('utf-8', { fatal: true }); // only notices invalid bytes
    this.invalidUtf8 = false;
    this.skipLf = false; // the previous piece ended with CR
    this.partial = []; // text of the unfinished line
    this.partialLength = 0;
    this.data = [];
    this.dataLength = 0;
    this.event = '';
    this.maxLineLength = maxLineLength;
    this.maxEventSize = maxEventSize;
    this.bytesSeen = 0;
  }

  feed(bytes) {
    this.bytesSeen += bytes.length;
    if (this.strict !== null) {
      try {
        this.strict.decode(bytes, { stream: true });
      } catch {
        this.invalidUtf8 = true;
        this.strict = null;
      }
    }
    return this.feedText(this.text.decode(bytes, { stream: true }));
  }

  // End of stream: true if an event (or line, or partial character) was left undispatched.
  close() {
    const tail = this.text.decode();
    if (this.strict !== null) {
      try {
        this.strict.decode();
      } catch {
        this.invalidUtf8 = true;
      }
    }
    const discarded = Boolean(tail || this.partialLength || this.data.length);
    this.partial = [];
    this.partialLength = 0;
    this.data = [];
    this.dataLength = 0;
    return discarded;
  }

  feedText(text) {
    if (!text) return [];
    if (this.skipLf) {
      this.skipLf = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    let lines;
    if (text.includes('\r')) {
      if (text[text.length - 1] === '\r') this.skipLf = true;
      lines = text.split(/\r\n|\r|\n/);
    } else {
      lines = text.split('\n');
    }
    const last = lines.pop(); // the unfinished line ('' when text ended with a line ending)
    const events = [];
    if (lines.length) {
      if (this.partial.length) {
        this.partial.push(lines[0]);
        lines[0] = this.partial.join('');
        this.partial = [];
        this.partialLength = 0;
      }
      try {
        this.lines(lines, events);
      } catch (error) {
        if (error instanceof SSELimitError) error.events = events;
        throw error;
      }
    }
    if (last) {
      this.partial.push(last);
      this.partialLength += codePoints(last);
      if (this.partialLength > this.maxLineLength) {
        const error = this.lineTooLong(this.partialLength);
        error.events = events;
        throw error;
      }
    }
    return events;
  }

  lines(lines, events) {
    for (const line of lines) {
      if (!line) {
        if (this.data.length) events.push(this.dispatch());
        else this.event = '';
        continue;
      }
      if (line.length > this.maxLineLength && codePoints(line) > this.maxLineLength) {
        throw this.lineTooLong(codePoints(line));
      }
      if (line.startsWith('data: ')) this.appendData(line.slice(6));
      else this.field(line);
    }
  }

  field(line) {
    if (line[0] === ':') return; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (name === 'data') this.appendData(value);
    else if (name === 'event') this.event = value;
    // id and retry change nothing a tool call depends on; other fields are ignored.
  }

  appendData(value) {
    this.dataLength += codePoints(value) + (this.data.length ? 1 : 0);
    this.data.push(value);
    if (this.dataLength > this.maxEventSize) {
      throw new SSELimitError(
        `SSE event data passed ${this.maxEventSize} characters`,
        this.bytesSeen,
      );
    }
  }

  dispatch() {
    const event = { data: this.data.join('\n'), event: this.event || 'message' };
    this.data = [];
    this.dataLength = 0;
    this.event = '';
    return event;
  }

  lineTooLong(length) {
    return new SSELimitError(
      `SSE line passed ${this.maxLineLength} characters (${length} so far)`,
      this.bytesSeen,
    );
  }
}

// -- call state: dialect-neutral ----------------------------------------------------------------

class CallSlot {
  constructor(choice, index) {
    this.choice = choice;
    this.index = index;
    this.id = null;
    this.name = null;
    this.text = ''; // V8 concatenates into ropes: appending is linear overall
    this.received = false; // any non-empty fragment arrived
    this.size = 0; // UTF-8 bytes buffered
    this.final = false;
  }
}

function repeatedUnit(text) {
  // One JSON value written k >= 2 times back to back (quirk C11), recognised, never repaired.
  for (let size = 1; size <= text.length / 2; size += 1) {
    if (text.length % size) continue;
    const unit = text.slice(0, size);
    if (/[ \t\n\r]$/.test(unit) || unit.repeat(text.length / size) !== text) continue;
    try {
      JSON.parse(unit);
      return true;
    } catch {
      // not a JSON value: try a longer unit
    }
  }
  return false;
}

class CallBook {
  constructor(tools, limits, findings, strict) {
    this.tools = new Map(tools.map((tool) => [tool.name, tool]));
    this.validators = new Map(
      tools.map((tool) => [tool.name, tool.parameters == null ? null : compile(tool.parameters)]),
    );
    this.limits = limits;
    this.findings = findings;
    this.strict = strict;
    this.slots = [];
    this.perChoice = new Map();
    this.ids = new Set();
    this.outbox = [];
  }

  open(choice) {
    if (this.slots.length >= this.limits.max_calls) {
      throw new StreamFailure(
        Reason.TOO_LARGE,
        `more than ${this.limits.max_calls} calls in one stream`,
      );
    }
    const index = this.perChoice.get(choice) || 0;
    this.perChoice.set(choice, index + 1);
    const slot = new CallSlot(choice, index);
    this.slots.push(slot);
    return slot;
  }

  setId(slot, id) {
    slot.id = id;
    this.ids.add(id);
  }

  append(slot, fragment) {
    if (slot.final || !fragment) return;
    const size = utf8Length(fragment);
    const room = this.limits.max_argument_bytes - slot.size;
    if (size > room) {
      // Keep what fits, cut at a character boundary, and stop buffering.
      const bytes = Buffer.from(fragment, 'utf8').subarray(0, room);
      const kept = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes, { stream: true });
      slot.text += kept;
      slot.received = true;
      slot.size = this.limits.max_argument_bytes;
      this.reject(slot, Reason.TOO_LARGE, `arguments passed ${this.limits.max_argument_bytes} bytes`);
      return;
    }
    slot.text += fragment;
    slot.received = true;
    slot.size += size;
  }

  reject(slot, reason, detail) {
    if (slot.final) return;
    slot.final = true;
    this.outbox.push(result(slot, 'rejected', null, reason, detail));
  }

  complete(slot) {
    if (slot.final) return;
    if (slot.name === null) {
      this.reject(slot, Reason.MISSING_NAME, 'the call never received a name');
      return;
    }
    const tool = this.tools.get(slot.name);
    if (tool === undefined) {
      const known = [...this.tools.keys()].sort().join(', ') || 'none';
      this.reject(slot, Reason.UNKNOWN_TOOL, `${JSON.stringify(slot.name)} is not an exposed tool (${known})`);
      return;
    }
    if (slot.id === null) {
      if (this.strict) {
        this.reject(slot, Reason.MISSING_ID, 'the call never received an id');
        return;
      }
      this.setId(slot, this.syntheticId(slot));
      this.findings.record('C7');
    }
    const parsed = this.parse(slot, tool);
    if (parsed === null) return;
    const validate = this.validators.get(slot.name);
    if (validate) {
      const problem = validate(parsed.value);
      if (problem !== null) {
        this.reject(slot, Reason.SCHEMA_VIOLATION, problem);
        return;
      }
    }
    slot.final = true;
    this.outbox.push(result(slot, 'ready', parsed, null, null));
  }

  // The parsed arguments and their JSON text, or null once the call is rejected.
  parse(slot, tool) {
    if (!slot.received) {
      const schema = tool.parameters;
      if (!truthy(schema) || (!truthy(get(schema, 'properties')) && !truthy(get(schema, 'required')))) {
        this.findings.record('C13');
        return { value: {}, json: '{}' };
      }
      this.reject(slot, Reason.MALFORMED_JSON, 'no arguments arrived');
      return null;
    }
    let value;
    try {
      value = JSON.parse(slot.text);
    } catch (error) {
      if (repeatedUnit(slot.text)) this.findings.record('C11');
      this.reject(slot, Reason.MALFORMED_JSON, `arguments are not JSON: ${error.message}`);
      return null;
    }
    if (!isObject(value)) {
      const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
      this.reject(slot, Reason.MALFORMED_JSON, `arguments are a JSON ${type}, not an object`);
      return null;
    }
    // The result carries the text that was parsed, not JSON.stringify(value): a number beyond
    // a double's precision reaches the caller exactly. Outside strings JSON text has no
    // newline but as whitespace, which a JSON line must not contain.
    return { value, json: slot.text.replace(/[\r\n]/g, ' ') };
  }

  settle(slots, reason, detail) {
    for (const slot of slots) this.reject(slot, reason, detail);
  }

  fail(reason, detail) {
    this.settle(this.slots, reason, detail);
  }

  // A deviation from the strict profile: recorded; rejected under strict where the table says.
  deviation(quirk, detail, slot) {
    this.findings.record(quirk);
    if (this.strict && slot && has(STRICT_REJECTS, quirk)) {
      this.reject(slot, STRICT_REJECTS[quirk], `${quirk}: ${detail} (rejected by the strict profile)`);
    }
  }

  drain() {
    const out = this.outbox.sort((a, b) => a.choice - b.choice || a.index - b.index);
    this.outbox = [];
    return out;
  }

  syntheticId(slot) {
    const base =
      slot.choice < 100 && slot.index < 1000
        ? `call${String(slot.choice).padStart(2, '0')}${String(slot.index).padStart(3, '0')}`
        : `call_${slot.choice}_${slot.index}`;
    let candidate = base;
    for (let n = 1; this.ids.has(candidate); n += 1) candidate = `${base}x${n}`;
    return candidate;
  }
}

// A final call. `arguments` is the parsed value when ready; `json` the text it was parsed from.
function result(slot, status, parsed, reason, detail) {
  return {
    choice: slot.choice,
    index: slot.index,
    id: slot.id,
    name: slot.name,
    arguments_text: slot.text,
    arguments: parsed === null ? null : parsed.value,
    json: parsed === null ? null : parsed.json,
    status,
    reason,
    detail,
  };
}

// -- the OpenAI Chat Completions dialect --------------------------------------------------------

const COMPLETING = new Set(['tool_calls', 'stop', 'function_call']);
const MARKUP = ['<tool_call>', '[TOOL_CALLS]', '<|tool_call'];

class Call {
  constructor(slot) {
    this.slot = slot;
    this.deltas = 0;
    this.sawType = false;
    this.wire = null; // the tool-call index the provider uses for it
  }
}

class Choice {
  constructor(number) {
    this.number = number;
    this.calls = [];
    this.byWire = new Map();
    this.byId = new Map();
    this.legacy = null;
    this.finish = null;
    this.role = false;
    this.contentTail = '';
  }
}

class OpenAIChat {
  constructor(book) {
    this.book = book;
    this.choices = new Map();
    this.done = false;
    this.chunkId = null;
    this.created = null;
    this.events = 0;
  }

  receive(event, data) {
    this.events += 1;
    if (this.done) {
      this.book.deviation('C20', 'event after [DONE] (ignored)', null);
      return;
    }
    if (!data) {
      this.book.deviation('T6', 'event with empty data (ignored)', null);
      return;
    }
    if (data[0] !== '{' && data.replace(SPACE, '') === '[DONE]') {
      this.sentinel();
      return;
    }
    let payload;
    try {
      payload = JSON.parse(data);
    } catch (error) {
      if (event === 'error') throw new StreamFailure(Reason.STREAM_ERROR, describeError(data));
      if (data.includes('\n')) this.book.deviation('T10', 'several JSON documents in one event', null);
      throw new StreamFailure(
        Reason.PROTOCOL_ERROR,
        `event ${this.events}: data is not JSON (${error.message}): ${clip(data)}`,
      );
    }
    if (event === 'error') throw new StreamFailure(Reason.STREAM_ERROR, describeError(payload));
    this.payload(payload);
  }

  // End of file: calls of unfinished choices were interrupted.
  end() {
    if (this.done) return;
    const unfinished = [...this.choices.values()].filter((choice) => choice.finish === null);
    for (const choice of unfinished) {
      this.settle(choice, Reason.INTERRUPTED, 'the stream ended before the choice had a finish_reason');
    }
    if (this.choices.size && !unfinished.length) {
      this.book.deviation('C24', 'the stream ended without [DONE]', null);
    }
  }

  payload(payload) {
    if (!isObject(payload)) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: a chunk must be a JSON object`);
    }
    if (truthy(get(payload, 'error')) || get(payload, 'object') === 'error') {
      throw new StreamFailure(Reason.STREAM_ERROR, describeError(payload));
    }
    const choices = get(payload, 'choices');
    let usage = get(payload, 'usage');
    if (usage === null) {
      const extra = get(payload, 'x_groq');
      usage = isObject(extra) ? get(extra, 'usage') : null;
    }
    if (usage !== null && (truthy(choices) || !truthy(usage))) {
      this.book.deviation('C23', 'usage outside a final chunk with empty choices', null);
    }
    if (!truthy(choices)) {
      if (usage === null) this.book.deviation('C21', 'a chunk with empty choices and no usage', null);
      return;
    }
    if (!Array.isArray(choices)) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: choices is not a list`);
    }
    this.envelope(payload);
    for (const raw of choices) this.choice(raw);
  }

  envelope(payload) {
    const chunkId = get(payload, 'id');
    const created = get(payload, 'created');
    if (this.chunkId === null && this.created === null) {
      this.chunkId = chunkId;
      this.created = created;
      if (!truthy(chunkId) || get(payload, 'object') !== 'chat.completion.chunk') {
        this.book.deviation('C21', 'blank chunk id or object', null);
      }
    } else if (!same(chunkId, this.chunkId) || !same(created, this.created)) {
      this.book.deviation('C30', 'chunk id or created changed between chunks', null);
    }
  }

  choice(raw) {
    if (!isObject(raw)) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: a choice is not an object`);
    }
    const number = has(raw, 'index') ? raw.index : 0;
    if (!Number.isInteger(number) || number < 0) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: choice index ${clip(number)} is not valid`);
    }
    let choice = this.choices.get(number);
    if (choice === undefined) {
      if (this.choices.size >= this.book.limits.max_choices) {
        throw new StreamFailure(
          Reason.TOO_LARGE,
          `more than ${this.book.limits.max_choices} choices in one stream`,
        );
      }
      choice = new Choice(number);
      this.choices.set(number, choice);
    }
    let delta = get(raw, 'delta');
    if (delta === null) {
      delta = {};
      if (!has(raw, 'delta')) this.book.deviation('C22', 'a choice without a delta', null);
    } else if (!isObject(delta)) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: delta is not an object`);
    }
    const finishRaw = get(raw, 'finish_reason');
    const finish = truthy(finishRaw) ? finishRaw : null; // "" means "not yet" on some servers
    if (choice.finish !== null) {
      this.afterFinish(choice, delta, finish);
      return;
    }
    const role = get(delta, 'role');
    if (role !== null) {
      if (choice.role || !truthy(role)) this.book.deviation('C29', 'role repeated or empty', null);
      choice.role = true;
    }
    const content = get(delta, 'content');
    if (typeof content === 'string' && content) this.scanContent(choice, content);
    const toolCalls = get(delta, 'tool_calls');
    if (truthy(toolCalls)) {
      if (!Array.isArray(toolCalls)) {
        throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: tool_calls is not a list`);
      }
      for (const entry of toolCalls) this.toolCall(choice, entry);
    }
    const functionCall = get(delta, 'function_call');
    if (truthy(functionCall)) this.legacyCall(choice, functionCall);
    if (finish !== null) this.finish(choice, finish);
  }

  afterFinish(choice, delta, finish) {
    const what =
      truthy(get(delta, 'tool_calls')) || truthy(get(delta, 'function_call')) || truthy(get(delta, 'content'))
        ? 'content or tool-call deltas'
        : finish !== null
          ? 'a second finish_reason'
          : 'a chunk';
    this.book.deviation('C20', `${what} after finish_reason (ignored)`, null);
  }

  scanContent(choice, content) {
    const window = choice.contentTail + content;
    if (MARKUP.some((mark) => window.includes(mark))) {
      this.book.deviation('C31', 'tool-call markup inside message content', null);
    }
    choice.contentTail = window.slice(-16);
  }

  toolCall(choice, entry) {
    if (!isObject(entry)) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: a tool call is not an object`);
    }
    let fn = get(entry, 'function');
    if (fn === null) fn = {};
    else if (!isObject(fn)) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: tool_calls[].function is not an object`);
    }
    const id = this.callId(get(entry, 'id'));
    const name = this.name(get(fn, 'name'));
    const [call, quirks] = this.route(choice, get(entry, 'index'), id, name);
    if (call === null) return;
    if (get(entry, 'type') !== null) {
      if (call.sawType) quirks.push(['C4', "id or type repeated after the call's first delta"]);
      call.sawType = true;
    }
    this.apply(call, id, name, get(fn, 'arguments'));
    for (const [quirk, detail] of quirks) this.book.deviation(quirk, detail, call.slot);
    if (get(entry, 'extra_content') !== null) {
      this.book.deviation('C28', 'extra_content on a tool call (kept)', call.slot);
    }
  }

  legacyCall(choice, functionCall) {
    if (!isObject(functionCall)) {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: function_call is not an object`);
    }
    if (choice.legacy === null) {
      choice.legacy = this.open(choice);
      this.book.deviation('C27', 'legacy delta.function_call', choice.legacy.slot);
    }
    this.apply(choice.legacy, null, this.name(get(functionCall, 'name')), get(functionCall, 'arguments'));
  }

  name(raw) {
    if (!truthy(raw)) return null;
    if (typeof raw !== 'string') {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: function.name is not a string`);
    }
    return raw;
  }

  callId(raw) {
    if (raw === null || raw === '') return null;
    if (typeof raw === 'string') return raw;
    if (Number.isInteger(raw) && !this.book.strict) {
      this.book.deviation('C7', 'numeric call id (stringified)', null);
      return String(raw);
    }
    this.book.deviation('C7', `call id ${clip(raw)} is not a string (ignored)`, null);
    return null;
  }

  // The call a tool-call entry belongs to, and the quirks seen finding it (applied once the
  // entry's identity is set, so a rejection still names the call).
  route(choice, index, id, name) {
    const quirks = [];
    if (!Number.isInteger(index)) {
      if (typeof index === 'string' && /^[0-9]+$/.test(index)) {
        index = parseInt(index, 10);
        quirks.push(['C1', 'tool-call index sent as a string']);
      } else if (index === null) {
        return this.routeWithoutIndex(choice, id, name);
      } else {
        throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: tool-call index ${clip(index)} is not valid`);
      }
    }
    let call = choice.byWire.get(index);
    if (call === undefined) {
      const expected = choice.byWire.size;
      const unplaced = choice.calls.filter((c) => c.wire === null && c !== choice.legacy);
      if (id === null && name === null && unplaced.length === 1) {
        // A bare fragment naming an index after the call's header came without one.
        call = unplaced[0];
        quirks.push(['C1', "tool-call index missing on the call's first delta"]);
      } else {
        call = this.open(choice);
      }
      call.wire = index;
      choice.byWire.set(index, call);
      if (index !== expected) quirks.push(['C14', `tool-call index ${index} where ${expected} was next`]);
      return [call, quirks];
    }
    const slot = call.slot;
    if (id !== null && slot.id !== null && id !== slot.id) {
      if (name !== null) {
        call = this.open(choice);
        call.wire = index;
        choice.byWire.set(index, call);
        quirks.push(['C2', `index ${index} reused by a new call ${JSON.stringify(id)}`]);
      } else {
        quirks.push(['C3', `id changed from ${JSON.stringify(slot.id)} to ${JSON.stringify(id)} without a name`]);
      }
    }
    return [call, quirks];
  }

  routeWithoutIndex(choice, id, name) {
    let call = id !== null ? choice.byId.get(id) : undefined;
    if (call === undefined) {
      if (id !== null || name !== null || !choice.calls.length) {
        call = this.open(choice);
      } else if (choice.calls.length === 1) {
        call = choice.calls[0];
      } else {
        const detail = 'tool-call index missing and several calls open: cannot tell where a fragment goes';
        this.book.findings.record('C1');
        this.book.settle(choice.calls.map((c) => c.slot), Reason.PROTOCOL_ERROR, detail);
        return [null, []];
      }
    }
    return [call, [['C1', 'tool-call index missing']]];
  }

  open(choice) {
    const call = new Call(this.book.open(choice.number));
    choice.calls.push(call);
    return call;
  }

  apply(call, id, name, args) {
    const slot = call.slot;
    const first = call.deltas === 0;
    call.deltas += 1;
    if (id !== null) {
      if (slot.id === null) {
        this.book.setId(slot, id);
        const choice = this.choices.get(slot.choice);
        if (!choice.byId.has(id)) choice.byId.set(id, call);
      } else if (id === slot.id && !first) {
        this.book.deviation('C4', "id or type repeated after the call's first delta", slot);
      }
    }
    if (name !== null) {
      if (slot.name === null) {
        slot.name = name;
        if (!first) this.book.deviation('C6', "the name arrived after the call's first delta", slot);
      } else if (name === slot.name) {
        this.book.deviation('C5', 'function name repeated', slot);
      } else {
        this.book.reject(slot, Reason.PROTOCOL_ERROR, `function name changed from ${JSON.stringify(slot.name)} to ${JSON.stringify(name)}`);
      }
    }
    if (args === null || args === '') return;
    if (typeof args === 'string') {
      this.book.append(slot, args);
      return;
    }
    this.book.append(slot, JSON.stringify(args)); // kept even when the strict profile rejects
    this.book.deviation('C32', 'arguments sent as a JSON value, not a string', slot);
  }

  finish(choice, finish) {
    if (typeof finish !== 'string') {
      throw new StreamFailure(Reason.PROTOCOL_ERROR, `event ${this.events}: finish_reason ${clip(finish)} is not a string`);
    }
    choice.finish = finish;
    if (COMPLETING.has(finish)) {
      if (finish === 'stop' && choice.calls.length) {
        this.book.deviation('C16', 'finish_reason stop with tool calls', null);
      }
      for (const call of choice.calls) this.book.complete(call.slot);
      return;
    }
    if (finish === 'length') {
      this.settle(choice, Reason.TRUNCATED, 'finish_reason length: the token limit cut the call off');
    } else if (finish === 'content_filter') {
      this.settle(choice, Reason.FILTERED, 'finish_reason content_filter');
    } else {
      this.book.deviation('C33', `finish_reason ${JSON.stringify(finish)}`, null);
      const reason = finish === 'error' ? Reason.STREAM_ERROR : Reason.PROVIDER_FINISH;
      this.settle(choice, reason, `finish_reason ${JSON.stringify(finish)}`);
    }
  }

  sentinel() {
    this.done = true;
    for (const choice of this.choices.values()) {
      if (choice.finish === null) {
        this.settle(choice, Reason.UNFINISHED, '[DONE] arrived before the choice had a finish_reason');
      }
    }
  }

  settle(choice, reason, detail) {
    this.book.settle(choice.calls.map((call) => call.slot), reason, detail);
  }
}

function describeError(payload) {
  const error = isObject(payload) && has(payload, 'error') ? payload.error : payload;
  if (!isObject(error)) return `provider error: ${clip(error)}`;
  return `provider error: ${get(error, 'message') || 'no message'}`;
}

// -- the assembler: the one entry point for a peer's bytes --------------------------------------

class Findings {
  constructor() {
    this.quirks = new Set();
  }

  record(quirk) {
    this.quirks.add(quirk);
  }
}

class Assembler {
  constructor(tools, { profile = 'lenient', limits = {} } = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.findings = new Findings();
    this.book = new CallBook(tools, this.limits, this.findings, profile === 'strict');
    this.wire = new OpenAIChat(this.book);
    this.sse = new SSEDecoder(this.limits.max_line_length, this.limits.max_event_size);
    this.failed = null;
    this.closed = false;
  }

  // Bytes of the response body; returns the results they made final.
  feed(bytes) {
    if (this.closed) throw new Error('this assembler was closed; create one per response');
    if (this.failed !== null) return [];
    return this.guard(() => {
      let events;
      try {
        events = this.sse.feed(bytes);
      } catch (error) {
        // Events completed before a limit was passed are real: handle them first.
        if (error instanceof SSELimitError) {
          for (const event of error.events) this.wire.receive(event.event, event.data);
        }
        throw error;
      }
      for (const event of events) this.wire.receive(event.event, event.data);
      this.noteInvalidUtf8();
    });
  }

  // The connection ended: settle every call still open.
  close() {
    if (this.closed) throw new Error('this assembler was closed; create one per response');
    this.closed = true;
    if (this.failed !== null) return this.book.drain();
    if (this.sse.close()) this.findings.record('T9');
    this.noteInvalidUtf8();
    return this.guard(() => this.wire.end());
  }

  // The one place the stream's failures become rejections: every call not yet final is
  // rejected and further input is ignored.
  guard(step) {
    try {
      step();
    } catch (error) {
      if (error instanceof StreamFailure) {
        this.fail(error.reason, error.detail);
      } else if (error instanceof SSELimitError) {
        this.fail(Reason.TOO_LARGE, `${error.message} (at byte ${error.offset})`);
      } else {
        throw error;
      }
    }
    return this.book.drain();
  }

  fail(reason, detail) {
    this.failed = detail;
    this.book.fail(reason, detail);
  }

  noteInvalidUtf8() {
    if (this.sse.invalidUtf8) this.findings.record('T11');
  }
}

// -- the pipe protocol adapter ------------------------------------------------------------------

function resultLine(r) {
  // Built by hand so that `arguments` is the JSON text that was parsed (see CallBook.parse).
  return (
    `{"choice":${r.choice},"index":${r.index},"id":${JSON.stringify(r.id)},` +
    `"name":${JSON.stringify(r.name)},"arguments_text":${JSON.stringify(r.arguments_text)},` +
    `"arguments":${r.json === null ? 'null' : r.json},"status":"${r.status}",` +
    `"reason":${JSON.stringify(r.reason)},"detail":${JSON.stringify(r.detail)}}`
  );
}

function answer(seq, fields) {
  return `{"seq":${JSON.stringify(seq)},${fields}}`;
}

// Answers one request line; null for stop.
function handle(line, profile, state) {
  const request = JSON.parse(line);
  try {
    switch (request.cmd) {
      case 'start':
        return JSON.stringify({
          version: PROTOCOL_VERSION,
          implementation: {
            name: 'node-assembler',
            version: '0.1.0',
            language: 'javascript',
            language_version: process.version,
            dialects: ['openai-chat'],
            profile,
          },
        });
      case 'run':
        state.assembler = new Assembler(request.tools, { profile: request.profile, limits: request.limits });
        return answer(request.seq, '"ok":true');
      case 'feed': {
        const released = state.assembler.feed(Buffer.from(request.data, 'base64'));
        return answer(request.seq, `"results":[${released.map(resultLine).join(',')}]`);
      }
      case 'close': {
        const released = state.assembler.close();
        const findings = JSON.stringify([...state.assembler.findings.quirks]);
        state.assembler = null;
        return answer(request.seq, `"results":[${released.map(resultLine).join(',')}],"findings":${findings}`);
      }
      case 'stop':
        return null;
      default:
        throw new Error(`unknown command ${JSON.stringify(request.cmd)}`);
    }
  } catch (error) {
    const said = JSON.stringify({ message: String(error), traceback: error.stack });
    return answer(request.seq ?? null, `"error":${said}`);
  }
}

// The protocol loop, synchronous: a blocking read, the answers, a blocking write. The harness
// waits for each answer before it sends the next request, so there is nothing to overlap, and
// skipping the event loop halves the cost of a round trip.
function serve(profile) {
  const fs = require('node:fs');
  const { StringDecoder } = require('node:string_decoder');
  const utf8 = new StringDecoder('utf8');
  const buffer = Buffer.alloc(1 << 16);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const state = { assembler: null };
  const retry = (action) => {
    for (;;) {
      try {
        return action();
      } catch (error) {
        if (error.code !== 'EAGAIN') throw error;
        Atomics.wait(pause, 0, 0, 1); // a non-blocking descriptor: wait a millisecond
      }
    }
  };
  let pending = '';
  for (;;) {
    const read = retry(() => fs.readSync(0, buffer, 0, buffer.length, null));
    if (read === 0) return; // stdin closed
    pending += utf8.write(buffer.subarray(0, read));
    let end;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (!line.trim()) continue;
      const out = handle(line, profile, state);
      if (out === null) return;
      const bytes = Buffer.from(out + '\n');
      for (let written = 0; written < bytes.length; ) {
        written += retry(() => fs.writeSync(1, bytes, written));
      }
    }
  }
}

module.exports = { Assembler, SSEDecoder };

if (require.main === module) {
  serve(process.argv.includes('--strict') ? 'strict' : 'lenient');
}
