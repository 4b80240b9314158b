#!/usr/bin/env node
// The Vercel AI SDK with its OpenAI provider's Responses model, as a pipe adapter
// (openai-responses): `cmd:node adapters/js/ai-sdk-openai-responses.mjs`.
// `createOpenAI({ fetch }).responses(model)` reads the Responses API
// (`OpenAIResponsesLanguageModel.doStream`, @ai-sdk/openai/dist/index.js): it keys each
// `function_call` item by its `output_index` from `response.output_item.added`, streams its
// `function_call_arguments.delta` text as input deltas, and emits the call at the item's
// `response.output_item.done` with the arguments that event restates; an `error` event or a
// `response.failed` carrying an error becomes an `error` part. A custom tool is offered as
// the provider's `customTool` (`custom_tool_call` items, their input text handed back as is).
// The user path, what `streamText` does with the calls and what the adapter exposes are in
// lib/ai-sdk.mjs.

import { createOpenAI } from '@ai-sdk/openai';
import pipe from './lib/pipe.js';
import { OBSERVABLES, assembleWith } from './lib/ai-sdk.mjs';

const { BASE_URL, MODEL, serve, servingFetch } = pipe;

serve({
  name: 'ai-sdk-openai-responses',
  packages: ['ai', '@ai-sdk/openai'],
  dialects: ['openai-responses'],
  observables: OBSERVABLES,
  assemble: (chunks, tools) => {
    const provider = createOpenAI({ apiKey: 'callstream', baseURL: BASE_URL, fetch: servingFetch(chunks) });
    return assembleWith(provider.responses(MODEL), tools, { customTool: provider.tools.customTool });
  },
});
