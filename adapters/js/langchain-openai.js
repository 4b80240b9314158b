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
const OpenAI = require('openai');
const { BASE_URL, MESSAGES, MODEL, callResult, functionTools, serve, servingFetch } = require('./lib/pipe');
const { classified } = require('./lib/langchain');

function inBandError(error) {
  const cause = error && error.cause instanceof OpenAI.APIError ? error.cause : error;
  return (
    cause instanceof OpenAI.APIError &&
    !(cause instanceof OpenAI.APIConnectionError) &&
    cause.status === undefined
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
