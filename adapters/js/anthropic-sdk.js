#!/usr/bin/env node
'use strict';
// @anthropic-ai/sdk as a pipe adapter: `cmd:node adapters/js/anthropic-sdk.js` (anthropic-messages).
//
// The user code path of the SDK's helpers.md ("Streaming Helpers", `messages.stream()`):
//
//   const stream = client.messages.stream({ model, max_tokens, messages, tools });
//   stream.on('text', …);                           // text shown as it comes
//   const message = await stream.finalMessage();
//   for (const block of message.content) if (block.type === 'tool_use') run(block.name, block.input);
//
// Paths are in the installed package (node_modules/@anthropic-ai/sdk/lib/MessageStream.js).
// `#accumulateMessage` folds each event into a snapshot begun by `message_start`: a
// `tool_use` block is pushed at `content_block_start` and routed by the event's `index`, its
// `input_json_delta` fragments joined in a hidden `__json_buf` and `input` made a lazy
// getter that parses them with the vendored partial-JSON parser (`partialParse`,
// _vendor/partial-json-parser/parser.js), which completes truncated JSON and leaves anything
// else to `JSON.parse`, so it throws (at `content_block_stop`, which pins `input`, or when
// the caller reads it). Only `message_stop` makes the snapshot a received message;
// `finalMessage()` throws `AnthropicError("stream ended without producing a Message with
// role=assistant")` when none arrived, and an `event: error` throws `APIError`.
// `stop_reason` (`max_tokens` too) is only data on the message: nothing acts on it.
//
// Observables (docs/contract.md): every `tool_use` block of the final message is ready with
// its id and the SDK's parse of its input; a refusal is one of the SDK's own error classes
// (`AnthropicError` and its subclasses), which rejects every call of the snapshot it stopped
// at. The SDK keeps the text of a call's input out of sight (`__json_buf` is not enumerable),
// so `arguments_text` is not observable; its refusals are one class told apart by message, so
// `reason` is not either (D61). The stream's `#handleError` wraps any other error in an
// `AnthropicError` whose `cause` it is: that cause (a `SyntaxError` of the input parse, a
// `TypeError` in the fold) is the library's crash (D60).

const Anthropic = require('@anthropic-ai/sdk');
const { MESSAGES, MODEL, callResult, serve, servingFetch } = require('./lib/pipe');

/** The tools of a `run` as Messages API tools (a custom tool offered as a tool of its name). */
function anthropicTools(tools) {
  return tools.map((tool) => ({
    name: tool.name,
    input_schema: tool.parameters || { type: 'object', properties: {} },
  }));
}

/** The `tool_use` blocks of a message, in content order (the order they started, D16). */
function toolUses(message) {
  return ((message && message.content) || []).filter((block) => block && block.type === 'tool_use');
}

async function assemble(chunks, tools) {
  const client = new Anthropic({ apiKey: 'callstream', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch: servingFetch(chunks) });
  const request = { model: MODEL, max_tokens: 4096, messages: MESSAGES };
  if (tools.length) request.tools = anthropicTools(tools);
  const stream = client.messages.stream(request);
  let snapshot = null;
  stream.on('streamEvent', (_event, current) => {
    snapshot = current;
  });
  stream.on('error', () => {}); // finalMessage() rejects with it
  try {
    const message = await stream.finalMessage();
    return toolUses(message).map((block, index) => callResult(0, index, block.id, block.name, null, { arguments: block.input }));
  } catch (error) {
    if (!(error instanceof Anthropic.AnthropicError) || error instanceof Anthropic.APIConnectionError) throw error;
    if (error.cause instanceof Error && !(error.cause instanceof Anthropic.AnthropicError)) throw error.cause;
    const reason = error instanceof Anthropic.APIError ? 'stream_error' : 'protocol_error';
    // A rejected call hands back no input: its lazy parse is never read.
    return toolUses(snapshot).map((block, index) =>
      callResult(0, index, block.id, block.name, null, { rejected: reason, detail: `${error.constructor.name}: ${error.message}` }),
    );
  }
}

serve({
  name: 'anthropic-sdk',
  packages: ['@anthropic-ai/sdk'],
  dialects: ['anthropic-messages'],
  observables: ['status', 'arguments', 'ids'],
  assemble,
});
