#!/usr/bin/env node
// The Vercel AI SDK with its OpenAI-compatible provider, as a pipe adapter:
// `cmd:node adapters/js/ai-sdk-openai-compatible.mjs`: the provider users point at any
// Chat Completions server (`OpenAICompatibleChatLanguageModel.doStream`,
// @ai-sdk/openai-compatible/dist/index.js). The user path, what it folds and what it exposes
// are in lib/ai-sdk.mjs.

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import pipe from './lib/pipe.js';
import { OBSERVABLES, assembleWith } from './lib/ai-sdk.mjs';

const { BASE_URL, MODEL, serve, servingFetch } = pipe;

serve({
  name: 'ai-sdk-openai-compatible',
  packages: ['ai', '@ai-sdk/openai-compatible'],
  observables: OBSERVABLES,
  assemble: (chunks, tools) =>
    assembleWith(
      createOpenAICompatible({ name: 'callstream', apiKey: 'callstream', baseURL: BASE_URL, fetch: servingFetch(chunks) }).chatModel(MODEL),
      tools,
    ),
});
