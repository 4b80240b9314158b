#!/usr/bin/env node
'use strict';
// openai-node's Responses stream as a pipe adapter (openai-responses):
// `cmd:node adapters/js/openai-responses.js`.
//
// The user code path of the SDK's helpers.md ("Responses API", `.stream()`):
//
//   const stream = client.responses.stream({ model, input, tools });
//   stream.on('response.output_text.delta', …);      // text shown as it comes
//   const response = await stream.finalResponse();
//   for (const item of response.output) if (item.type === 'function_call') run(item.name, item.arguments);
//
// Paths are in the installed package (node_modules/openai/lib/responses/ResponseStream.js,
// lib/responses/ResponseAccumulator.js). `#addEvent` folds each event into a response
// snapshot (`accumulateResponseWithContext`): items by `output_index` from
// `output_item.added`, argument deltas appended to the item's `arguments`, `.done` events and
// the terminal `response.completed` restating what they carry; it throws `OpenAIError` where
// the events do not fit ("missing output at index 1", "Duplicate response output index 0.",
// "Cannot complete response with unfinished output items.", …) and `APIError` for an `error`
// event. At the end of the stream `finalResponse()` resolves with the snapshot, "even when the
// response is incomplete" (its doc comment): `status` (`incomplete`, `failed`,
// `in_progress`) and each item's `status` are data the caller may read; plain tools get no
// parse (`maybeParseResponse` parses only auto-parseable tools).
//
// Observables (docs/contract.md): every function (or custom) tool call of the final response
// is ready, with its call_id and its text, whatever the statuses (D72); a refusal is one of
// the SDK's own error classes, which rejects every call seen so far (as the SDK's own delta
// snapshots showed them). The SDK gives no parse of plain tools' arguments and no
// machine-readable reason (one class, `OpenAIError`, told apart by message: D61), and a
// Responses stream has no choices. Any error of another class, also wrapped in an
// `OpenAIError` as its `cause` by the stream's `#handleError`, is the library's crash (D60).

const OpenAI = require('openai');
const { BASE_URL, MESSAGES, MODEL, callResult, serve, servingFetch } = require('./lib/pipe');

/** The tools of a `run` as Responses API tools: functions, and custom tools with format. */
function responsesTools(tools) {
  return tools.map((tool) =>
    tool.type === 'custom'
      ? { type: 'custom', name: tool.name, ...(tool.format ? { format: tool.format } : {}) }
      : { type: 'function', name: tool.name, parameters: tool.parameters || { type: 'object', properties: {} }, strict: false },
  );
}

const CALL_TYPES = new Set(['function_call', 'custom_tool_call']);

function result(index, item, rejected, detail) {
  if (item.type === 'custom_tool_call') {
    return callResult(0, index, item.call_id, item.name, item.input, { rejected, arguments: item.input, kind: 'custom', detail });
  }
  return callResult(0, index, item.call_id, item.name, item.arguments, { rejected, detail });
}

/** The calls the stream's events showed so far, keyed by item id (else output index), in the
 * order they first appeared: what the SDK's events and delta snapshots gave its listeners. */
function watchCalls(stream) {
  const seen = new Map();
  const keyOf = (event, item) => (item && item.id) || event.item_id || `#${event.output_index}`;
  const merge = (key, fields) => seen.set(key, { ...(seen.get(key) || {}), ...fields });
  stream.on('event', (event) => {
    const item = event.item;
    if ((event.type === 'response.output_item.added' || event.type === 'response.output_item.done') && item && CALL_TYPES.has(item.type)) {
      merge(keyOf(event, item), item);
    } else if (event.type === 'response.function_call_arguments.done' && seen.has(keyOf(event))) {
      merge(keyOf(event), { arguments: event.arguments });
    } else if (event.type === 'response.custom_tool_call_input.delta' && seen.has(keyOf(event))) {
      merge(keyOf(event), { input: (seen.get(keyOf(event)).input || '') + event.delta });
    }
  });
  stream.on('response.function_call_arguments.delta', (event) => {
    if (seen.has(keyOf(event))) merge(keyOf(event), { arguments: event.snapshot });
  });
  return seen;
}

async function assemble(chunks, tools) {
  const client = new OpenAI({ apiKey: 'callstream', baseURL: BASE_URL, maxRetries: 0, fetch: servingFetch(chunks) });
  const request = { model: MODEL, input: MESSAGES };
  if (tools.length) request.tools = responsesTools(tools);
  const stream = client.responses.stream(request);
  const seen = watchCalls(stream);
  stream.on('error', () => {}); // finalResponse() rejects with it
  try {
    const response = await stream.finalResponse();
    return (response.output || []).filter((item) => item && CALL_TYPES.has(item.type)).map((item, index) => result(index, item, null));
  } catch (error) {
    if (!(error instanceof OpenAI.OpenAIError) || error instanceof OpenAI.APIConnectionError) throw error;
    if (error.cause instanceof Error && !(error.cause instanceof OpenAI.OpenAIError)) throw error.cause;
    const reason = error instanceof OpenAI.APIError ? 'stream_error' : 'protocol_error';
    return [...seen.values()].map((item, index) => result(index, item, reason, `${error.constructor.name}: ${error.message}`));
  }
}

serve({
  name: 'openai-node-responses',
  packages: ['openai'],
  dialects: ['openai-responses'],
  observables: ['status', 'arguments_text', 'ids'],
  assemble,
});
