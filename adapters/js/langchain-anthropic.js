#!/usr/bin/env node
'use strict';
// @langchain/anthropic as a pipe adapter (anthropic-messages):
// `cmd:node adapters/js/langchain-anthropic.js`.
//
// The user code path of LangChain.js's "How to stream tool calls" guide, with ChatAnthropic:
//
//   const model = new ChatAnthropic({ model, clientOptions: { baseURL } }).bindTools(tools);
//   let gathered;
//   for await (const chunk of await model.stream(messages)) gathered = gathered ? concat(gathered, chunk) : chunk;
//   for (const call of gathered.tool_calls) run(call.name, call.args);
//
// Paths are in the installed packages. ChatAnthropic (`_streamResponseChunks`,
// @langchain/anthropic/dist/chat_models.js) reads the Messages stream through its own pinned
// @anthropic-ai/sdk (`messages.create({stream: true})`, the events decoded and JSON-parsed,
// nothing folded) and turns each event into a chunk (`_makeMessageChunkFromAnthropicEvent`,
// dist/utils/message_outputs.js): a `tool_use` block's `content_block_start` gives a
// `tool_call_chunk` with its id, name and the block's `index`, each `input_json_delta` one
// with that index and the fragment. `concat` merges them by index, and the gathered message
// parses each group (lib/langchain.js). `message_stop` and `stop_reason` are read for
// metadata only: a stream cut short still hands back every call whose text parses.
//
// Observables (docs/contract.md): `tool_calls` entries are ready, with LangChain's parse;
// `invalid_tool_calls` are rejected with the one error "Malformed args.", so `reason` is not
// observable (D61), and a ready call carries no text (`arguments_text` not observable). An
// `event: error` throws the SDK's `APIError` (no HTTP status): the merged calls it cut short
// are rejected. Any other exception is the library's crash (D60).

const path = require('node:path');
const { createRequire } = require('node:module');
const { ChatAnthropic } = require('@langchain/anthropic');
const { concat } = require('@langchain/core/utils/stream');
const { MESSAGES, MODEL, callResult, functionTools, serve, servingFetch } = require('./lib/pipe');
const { classified } = require('./lib/langchain');

// The SDK ChatAnthropic itself loads (it pins its own version), for its error classes.
const Anthropic = createRequire(require.resolve('@langchain/anthropic'))('@anthropic-ai/sdk');

/** An error event inside the 200 stream: the SDK's `APIError` without an HTTP status. */
function inBandError(error) {
  return error instanceof Anthropic.APIError && !(error instanceof Anthropic.APIConnectionError) && error.status === undefined;
}

async function assemble(chunks, tools) {
  const chat = new ChatAnthropic({
    model: MODEL,
    apiKey: 'callstream',
    maxRetries: 0,
    clientOptions: { baseURL: 'http://127.0.0.1:9', fetch: servingFetch(chunks) },
  });
  const model = tools.length ? chat.bindTools(functionTools(tools)) : chat;
  let gathered;
  try {
    for await (const chunk of await model.stream(MESSAGES)) gathered = gathered ? concat(gathered, chunk) : chunk;
  } catch (error) {
    if (!inBandError(error)) throw error;
    return ((gathered && gathered.tool_call_chunks) || []).map((piece, index) =>
      callResult(0, index, piece.id, piece.name, piece.args, { rejected: 'stream_error', detail: `APIError: ${error.message}` }),
    );
  }
  return classified(gathered);
}

serve({
  name: 'langchain-anthropic-js',
  packages: ['@langchain/anthropic', '@langchain/core'],
  dialects: ['anthropic-messages'],
  observables: ['status', 'arguments', 'ids'],
  assemble,
});
