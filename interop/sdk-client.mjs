// The official TypeScript SDK's client against a toolsmith endpoint over streamable HTTP:
// lists the tools, calls two (one with progress), and tries what a web page or a client
// without the token would. Prints one JSON report.
//
//   node sdk-client.mjs URL      (PROXY_TOKEN: the bearer token)
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const token = process.env.PROXY_TOKEN;
const client = new Client({ name: "sdk-client", version: "1.0.0" }, { capabilities: {} });
await client.connect(
  new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
);
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const simple = await client.callTool({ name: "test_simple_text", arguments: {} });
const progress = [];
await client.request(
  { method: "tools/call", params: { name: "test_tool_with_progress", arguments: {}, _meta: { progressToken: "t-1" } } },
  CallToolResultSchema,
  { onprogress: (p) => progress.push(p.progress) },
);
await client.close();

// A raw POST of an initialize, with headers of our choosing: the status it gets.
function post(headers) {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (response) => {
        response.resume();
        resolve(response.statusCode);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}
const auth = { authorization: `Bearer ${token}` };
const report = {
  tools,
  text: simple.content[0].text,
  progress,
  withoutToken: await post({}),
  evilOrigin: await post({ ...auth, origin: "http://evil.example" }),
  evilHost: await post({ ...auth, host: "evil.example" }),
};
console.log(JSON.stringify(report));
process.exit(0);
