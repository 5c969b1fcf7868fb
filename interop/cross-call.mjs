// The official TypeScript SDK's client (@modelcontextprotocol/client 2.4.0) in MODE calling TOOL
// with ARGUMENTS_JSON at URL, answering whatever the server asks on the way — an elicitation
// (accepted, as user `ada`) and a sampling request (the model's answer `sampled`) — however the
// era carries the question: a request to a client of the handshake era, an
// `InputRequiredResult` to a 2026-07-28 one. Prints the result, or what was raised, and the
// questions asked, as JSON.
//
//   node cross-call.mjs MODE URL TOOL ARGUMENTS_JSON   (PROXY_TOKEN: the bearer token)
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [mode, url, tool, args] = process.argv.slice(2);
const negotiation = mode === "legacy" || mode === "auto" ? mode : { pin: mode };
const client = new Client(
  { name: "cross-call", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: negotiation } },
);
const asked = [];
client.setRequestHandler("elicitation/create", async () => {
  asked.push("elicitation/create");
  return { action: "accept", content: { username: "ada", email: "ada@example.org" } };
});
client.setRequestHandler("sampling/createMessage", async () => {
  asked.push("sampling/createMessage");
  return { role: "assistant", content: { type: "text", text: "sampled" }, model: "fixture" };
});
const token = process.env.PROXY_TOKEN;
const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : {};
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
let result;
try {
  result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
} catch (error) {
  result = { raised: String(error) };
}
await client.close();
process.stdout.write(`${JSON.stringify({ result, asked })}\n`, () => process.exit(0));
