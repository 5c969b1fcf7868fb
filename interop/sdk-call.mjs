// The official TypeScript SDK's client calling tools of a toolsmith endpoint over streamable
// HTTP. The SDK checks each result against the protocol's schema (and a structure against the
// tool's output schema); prints the tools listed and the results as one JSON object.
//
//   node sdk-call.mjs URL TOOL ARGUMENTS_JSON [TOOL ARGUMENTS_JSON]...   (PROXY_TOKEN: the bearer token)
//   (`{{artifact}}` in ARGUMENTS_JSON: the last artifact id the results before it named;
//    TOOL `@read` with {"uri": …} reads a resource, `@templates` lists the resource templates)
// With COUNT_TOKENS=1, `tokens` in the report: for each result, the o200k tokens of what a reader
// sees of it (its text blocks' text, the JSON of other blocks but images and audio, and the
// structure's JSON), counted by js-tiktoken, OpenAI's encoder for JavaScript — not by toolsmith.
// Only then is the encoder loaded: making it takes 0.6 s of processor time, three times what the
// rest of a run takes.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

let count = null;
if (process.env.COUNT_TOKENS === "1") {
  const { Tiktoken } = await import("js-tiktoken/lite");
  const { default: o200k } = await import("js-tiktoken/ranks/o200k_base");
  const encoder = new Tiktoken(o200k);
  count = (text) => encoder.encode(text).length;
}
const tokensSeen = (result) => {
  let tokens = 0;
  for (const block of result.content ?? []) {
    if (block.type === "text") tokens += count(block.text);
    else if (block.type === "resource" && typeof block.resource?.text === "string") tokens += count(block.resource.text);
    else if (!["image", "audio", "resource"].includes(block.type)) tokens += count(JSON.stringify(block));
  }
  if (result.structuredContent !== undefined) tokens += count(JSON.stringify(result.structuredContent));
  return tokens;
};

const [url, ...calls] = process.argv.slice(2);
const client = new Client({ name: "sdk-call", version: "1.0.0" }, { capabilities: {} });
const token = process.env.PROXY_TOKEN;
const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : {};
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
const tools = (await client.listTools()).tools;
const results = [];
const tokens = [];
// `{{artifact}}` in a call's arguments stands for the last artifact id the results before it
// named: a session reads what it made.
let artifact = "";
for (let i = 0; i + 1 < calls.length; i += 2) {
  const args = JSON.parse(calls[i + 1].replaceAll("{{artifact}}", artifact));
  let result;
  if (calls[i] === "@read") {
    // A read the server refuses is reported, not thrown: the refusal is what is checked.
    result = await client.readResource({ uri: args.uri }).catch((error) => ({ raised: String(error) }));
  } else if (calls[i] === "@templates") {
    result = await client.listResourceTemplates();
  } else {
    result = await client.callTool({ name: calls[i], arguments: args });
  }
  results.push(result);
  if (count) tokens.push(tokensSeen(result));
  const named = JSON.stringify(result.content ?? []).match(/artifact ([0-9a-f]{32})/g);
  if (named) artifact = named[named.length - 1].slice("artifact ".length);
}
await client.close();
// Exits once the whole report is written: a pipe takes it in pieces.
process.stdout.write(`${JSON.stringify(count ? { tools, results, tokens } : { tools, results })}\n`, () => process.exit(0));
