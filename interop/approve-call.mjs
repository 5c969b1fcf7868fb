// The official TypeScript SDK's client (@modelcontextprotocol/client 2.4.0) in MODE calling
// `write_file` of FILE at URL, answering the server's question about it (an elicitation: a
// request to a client of the handshake era, an `InputRequiredResult` to a 2026-07-28 one) with
// ANSWER (`accept` or `decline`). Prints the result, or what was raised, as JSON.
//
//   node approve-call.mjs MODE URL ANSWER FILE   (PROXY_TOKEN: the bearer token)
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [mode, url, answer, path] = process.argv.slice(2);
const negotiation = mode === "legacy" || mode === "auto" ? mode : { pin: mode };
const client = new Client(
  { name: "approve-call", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: negotiation } },
);
const elicited = () => (answer === "accept" ? { action: "accept", content: { approve: true } } : { action: "decline" });
client.setRequestHandler("elicitation/create", async () => elicited());
const requestInit = { headers: { Authorization: `Bearer ${process.env.PROXY_TOKEN}` } };
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
let report;
try {
  report = await client.callTool({ name: "write_file", arguments: { path, content: "hello" } });
} catch (error) {
  report = { raised: String(error) };
}
await client.close();
process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
