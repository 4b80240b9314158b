#!/usr/bin/env node
// The Vercel AI SDK with its OpenAI provider's chat model, as a pipe adapter:
// `cmd:node adapters/js/ai-sdk-openai.mjs`. `createOpenAI({ fetch }).chat(model)` reads Chat
// Completions (`OpenAIChatLanguageModel.doStream`, @ai-sdk/openai/dist/index.js); the user
// path, what it folds and what it exposes are in lib/ai-sdk.mjs.

import { createOpenAI } from '@ai-sdk/openai';
import pipe from './lib/pipe.js';
import { OBSERVABLES, assembleWith } from './lib/ai-sdk.mjs';

const { BASE_URL, MODEL, serve, servingFetch } = pipe;

serve({
  name: 'ai-sdk-openai',
  packages: ['ai', '@ai-sdk/openai'],
  observables: OBSERVABLES,
  assemble: (chunks, tools) =>
    assembleWith(createOpenAI({ apiKey: 'callstream', baseURL: BASE_URL, fetch: servingFetch(chunks) }).chat(MODEL), tools),
});
