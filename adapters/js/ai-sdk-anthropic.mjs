#!/usr/bin/env node
// The Vercel AI SDK with its Anthropic provider, as a pipe adapter (anthropic-messages):
// `cmd:node adapters/js/ai-sdk-anthropic.mjs`. `createAnthropic({ fetch })(model)` reads the
// Messages API (`AnthropicMessagesLanguageModel.doStream`, @ai-sdk/anthropic/dist/index.js):
// it keeps each `tool_use` block by the event's `index` from `content_block_start`, joins its
// `input_json_delta` fragments and emits the call at that block's `content_block_stop`
// (`tool-input-end`, then `tool-call` with the joined text, `{}` when it is empty); an
// `event: error` becomes an `error` part. The user path, what `streamText` does with the
// calls and what the adapter exposes are in lib/ai-sdk.mjs.

import { createAnthropic } from '@ai-sdk/anthropic';
import pipe from './lib/pipe.js';
import { OBSERVABLES, assembleWith } from './lib/ai-sdk.mjs';

const { MODEL, serve, servingFetch } = pipe;

serve({
  name: 'ai-sdk-anthropic',
  packages: ['ai', '@ai-sdk/anthropic'],
  dialects: ['anthropic-messages'],
  observables: OBSERVABLES,
  assemble: (chunks, tools) =>
    assembleWith(createAnthropic({ apiKey: 'callstream', baseURL: 'http://127.0.0.1:9/v1', fetch: servingFetch(chunks) }).messages(MODEL), tools),
});
