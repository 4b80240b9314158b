#!/usr/bin/env node
'use strict';
// @langchain/openai as a pipe adapter: `cmd:node adapters/js/langchain-openai.js`.
//
// The user code path of LangChain.js's "How to stream tool calls" guide:
//
//   const model = new ChatOpenAI({ model, configuration: { baseURL } }).bindTools(tools);
//   let gathered;
//   for await (const chunk of await model.stream(messages)) gathered = gathered ? concat(gathered, chunk) : chunk;
//   for (const call of gathered.tool_calls) run(call.name, call.args);
//   // gathered.invalid_tool_calls: the calls whose arguments LangChain could not parse
//
// Paths are in the installed packages. ChatOpenAI (Chat Completions unless asked for the
// Responses API, @langchain/openai/dist/chat_models/) reads `choices[0]` of each chunk and
// turns its tool-call deltas into `tool_call_chunks`; `concat` merges those by index
// (`mergeLists`, @langchain/core/dist/utils/_merge); the merged `AIMessageChunk` parses each
// group's text with `parsePartialJson` (`collapseToolCallChunks`,
// @langchain/core/dist/messages/utils.js): an object with an id makes a `tool_calls` entry,
// anything else an `invalid_tool_calls` entry. The finish reason only
// lands in `response_metadata`; nothing acts on it.
//
// Observables (docs/contract.md): `tool_calls` entries are ready, with LangChain's parse as
// their arguments; `invalid_tool_calls` are rejected. LangChain sets a call apart with the one
// error "Malformed args." whether its text did not parse or it had no id
// (`collapseToolCallChunks`, @langchain/core/dist/messages/utils.js), so `reason` is not
// observable (D61); it hands back no text of a ready call, so neither is `arguments_text`. An
// error payload inside the stream throws the openai SDK's `APIError` (no HTTP status): the
// merged calls it cut short are rejected. Several choices are not observable (choices[0]
// only). Any other exception is the library's crash. Custom tools are offered as functions of
// the same name (`bindTools` sends a custom tool to the Responses API).

const { ChatOpenAI } = require('@langchain/openai');
const { concat } = require('@langchain/core/utils/stream');
const { AIMessageChunk } = require('@langchain/core/messages');
const OpenAI = require('openai');
const { BASE_URL, MESSAGES, MODEL, callResult, functionTools, serve, servingFetch } = require('./lib/pipe');

function inBandError(error) {
  const cause = error && error.cause instanceof OpenAI.APIError ? error.cause : error;
  return (
    cause instanceof OpenAI.APIError &&
    !(cause instanceof OpenAI.APIConnectionError) &&
    cause.status === undefined
  );
}

/** LangChain's own verdicts, `tool_calls` ready with its parse and `invalid_tool_calls`
 * rejected, numbered by where each call's first chunk stands in `tool_call_chunks` (D16). */
function classified(message) {
  if (!(message instanceof AIMessageChunk)) return [];
  const chunks = message.tool_call_chunks || [];
  const firstAt = (entry) => {
    const at = chunks.findIndex((c) => (entry.id ? c.id === entry.id : !c.id && (c.name ?? '') === (entry.name ?? '')));
    return at < 0 ? Number.MAX_SAFE_INTEGER : at;
  };
  const entries = [
    ...(message.tool_calls || []).map((call, n) => ({ call, ready: true, n })),
    ...(message.invalid_tool_calls || []).map((call, n) => ({ call, ready: false, n: 1e6 + n })),
  ];
  entries.sort((a, b) => firstAt(a.call) - firstAt(b.call) || a.n - b.n);
  return entries.map(({ call, ready }, index) =>
    ready
      ? callResult(0, index, call.id, call.name, null, { arguments: call.args })
      : callResult(0, index, call.id, call.name, null, { rejected: 'malformed_json', detail: call.error }),
  );
}

async function assemble(chunks, tools) {
  const chat = new ChatOpenAI({
    model: MODEL,
    apiKey: 'callstream',
    maxRetries: 0,
    configuration: { baseURL: BASE_URL, fetch: servingFetch(chunks) },
  });
  const model = tools.length ? chat.bindTools(functionTools(tools)) : chat;
  let gathered;
  try {
    for await (const chunk of await model.stream(MESSAGES)) gathered = gathered ? concat(gathered, chunk) : chunk;
  } catch (error) {
    if (!inBandError(error)) throw error;
    return ((gathered && gathered.tool_call_chunks) || []).map((piece, index) =>
      callResult(0, index, piece.id, piece.name, piece.args, { rejected: 'stream_error' }),
    );
  }
  return classified(gathered);
}

serve({
  name: 'langchain-openai-js',
  packages: ['@langchain/openai', '@langchain/core', 'openai'],
  observables: ['status', 'arguments', 'ids'],
  assemble,
});
