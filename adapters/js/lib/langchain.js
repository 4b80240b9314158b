'use strict';
// What the LangChain.js adapters share (langchain-openai.js, langchain-anthropic.js): the
// verdicts of the `AIMessageChunk` their users gather by `concat`-ing the chunks of
// `.stream()`. The merged message parses each group of `tool_call_chunks` (merged by index,
// `mergeLists`, @langchain/core/dist/utils/_merge) with `parsePartialJson`
// (`collapseToolCallChunks`, @langchain/core/dist/messages/utils.js): an object with an id
// makes a `tool_calls` entry, anything else an `invalid_tool_calls` entry with the one error
// "Malformed args." (D61).

const { AIMessageChunk } = require('@langchain/core/messages');
const { callResult } = require('./pipe');

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

module.exports = { classified };
