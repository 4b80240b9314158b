// The Vercel AI SDK's user code path, shared by its two OpenAI chat providers (ai-sdk-openai.mjs,
// ai-sdk-openai-compatible.mjs). From the SDK's "Tool Calling" docs, tools without `execute`:
//
//   const result = streamText({ model, tools: { name: tool({ inputSchema: jsonSchema(…) }) }, messages });
//   for await (const part of result.fullStream) …   // text and tool parts shown as they come
//   for (const call of await result.toolCalls) if (!call.invalid) run(call.toolName, call.input);
//
// Paths are in the installed packages. Both providers fold tool-call deltas with
// `StreamingToolCallTracker` (@ai-sdk/provider-utils/dist/index.js): it routes each delta by
// id, index and name, emits `tool-call` for a call when its arguments form a complete JSON
// value, and at the stream's end (`flush`) finishes every call left unfinished, whatever the
// finish reason. `streamText` then parses each call's input against the tool's schema
// (`parseToolCall` in ai/dist/index.js): a call whose text does not parse or validate, or
// whose tool is unknown, comes back with `invalid: true` (and a `tool-error` part): the SDK
// sets it apart, so its users do not run it. A stream error arrives as an `error` part (or,
// thrown inside the provider's transform, errors `fullStream` itself); when no step finished,
// `toolCalls` rejects (NoOutputGeneratedError).
//
// Observables (docs/contract.md): each call handed back (`invalid` unset) is ready, with its
// id and the SDK's parse of its input; a call set apart or never handed back is refused. The
// SDK exposes no status or reason of a refused call and no text of a finished call's
// arguments, and reads `choices[0]` only: `status`, `reason`, `arguments_text` and `choices`
// are not observable. An error part whose error is not one of the SDK's own (`AISDKError`,
// `APICallError`…) is the library's crash.

import { AISDKError, jsonSchema, streamText, tool } from 'ai';
import pipe from './pipe.js';

const { MESSAGES, callResult } = pipe;

/** A custom tool's format as the Responses API (and so `customTool`) takes it: a grammar flat,
 * `{type: 'grammar', syntax, definition}`, where the pipe protocol gives Chat Completions'
 * nested `{type: 'grammar', grammar: {syntax, definition}}`. */
function responsesFormat(format) {
  return format.type === 'grammar' && format.grammar
    ? { type: 'grammar', syntax: format.grammar.syntax, definition: format.grammar.definition }
    : format;
}

/** The tools of a `run` as AI SDK tools, no `execute`: a custom tool as the provider's own
 * custom tool where it has one (`customTool`, the Responses model's `openai.tools.customTool`),
 * else as a function of the same name. */
function sdkTools(tools, customTool) {
  const offered = {};
  for (const t of tools) {
    offered[t.name] = t.type === 'custom' && customTool
      ? customTool(t.format ? { format: responsesFormat(t.format) } : {})
      : tool({ inputSchema: jsonSchema(t.parameters || { type: 'object', properties: {} }) });
  }
  return offered;
}

/** The SDK's own error classes mark its refusals; anything else thrown is its crash. */
function ownError(error) {
  return AISDKError.isInstance(error) || (error && typeof error === 'object' && 'name' in error && String(error.name).startsWith('AI_'));
}

/** Run `model` over one stream with `tools` offered, as the SDK's users do; the results. A
 * call of a custom tool offered through `customTool` is handed back with its input text. */
export async function assembleWith(model, tools, { customTool } = {}) {
  const custom = new Set(customTool ? tools.filter((t) => t.type === 'custom').map((t) => t.name) : []);
  const result = streamText({
    model,
    messages: MESSAGES,
    ...(tools.length ? { tools: sdkTools(tools, customTool) } : {}),
    maxRetries: 0,
    onError: () => {}, // the error parts are read below
  });
  const firstSeen = new Map(); // tool-call id → order of its tool-input-start (D16)
  try {
    for await (const part of result.fullStream) {
      if (part.type === 'tool-input-start' && !firstSeen.has(part.id)) firstSeen.set(part.id, firstSeen.size);
      if (part.type === 'error' && !ownError(part.error)) throw part.error;
    }
  } catch (error) {
    // A provider that throws inside its transform errors the whole stream: its own error
    // class is its refusal, whose calls never reach `toolCalls`.
    if (!ownError(error)) throw error;
    return [];
  }
  let calls;
  try {
    calls = await result.toolCalls;
  } catch (error) {
    if (!ownError(error)) throw error;
    return [];
  }
  // Numbered by first appearance (D16): `toolCalls` lists each call when its input completed.
  // A call set apart keeps its number, so the calls after it are not taken for it; a call the
  // provider ran itself (a server tool, `providerExecuted`) is no call of the caller's.
  const order = (call) => firstSeen.get(call.toolCallId) ?? Number.MAX_SAFE_INTEGER;
  return calls
    .filter((call) => !call.providerExecuted)
    .map((call, position) => ({ call, position }))
    .sort((a, b) => order(a.call) - order(b.call) || a.position - b.position)
    .map(({ call }, index) => ({ call, index }))
    .filter(({ call }) => !call.invalid)
    .map(({ call, index }) =>
      custom.has(call.toolName)
        ? callResult(0, index, call.toolCallId, call.toolName, call.input, { arguments: call.input, kind: 'custom' })
        : callResult(0, index, call.toolCallId, call.toolName, null, { arguments: call.input }),
    );
}

export const OBSERVABLES = ['arguments', 'ids'];
