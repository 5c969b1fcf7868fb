// Three clients of a gateway whose servers are shared, made by the official TypeScript SDK:
// which process serves each, whether each gets its own progress (their SDKs pick the same
// tokens), and what a server's request of a client becomes. Prints one JSON report.
//
//   node shared-client.mjs URL      (PROXY_TOKEN: the bearer token)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);

async function connect() {
  const client = new Client({ name: "shared-client", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${process.env.PROXY_TOKEN}` } },
  });
  await client.connect(transport);
  return client;
}

const clients = await Promise.all([connect(), connect(), connect()]);
const text = (result) => result.content.map((block) => block.text ?? "").join("");
const report = { subscribe: clients[0].getServerCapabilities()?.resources?.subscribe ?? false };
report.pids = await Promise.all(
  clients.map(async (client) => text(await client.callTool({ name: "whoami", arguments: {} }))),
);
report.progress = await Promise.all(
  clients.map(async (client) => {
    const seen = [];
    const result = await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
      onprogress: (progress) => seen.push(progress.progress),
    });
    return { seen, text: text(result) };
  }),
);
try {
  const result = await clients[0].callTool({ name: "test_sampling", arguments: { prompt: "hi" } });
  report.sampling = { isError: result.isError ?? false, text: text(result) };
} catch (error) {
  report.sampling = { error: String(error.message ?? error) };
}
try {
  await clients[0].setLoggingLevel("debug");
  report.setLevel = "answered";
} catch (error) {
  report.setLevel = String(error.message ?? error);
}
for (const client of clients) await client.close();
console.log(JSON.stringify(report));
