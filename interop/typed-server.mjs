// A typed tool written with the official TypeScript SDK's `McpServer`, over stdio: its output
// schema is a zod shape, its answer the structure and its JSON as text, as the SDK's examples
// write it. `list_issues` lists `count` issues, the issue `failing` failed.
//
//   node typed-server.mjs
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "typed-ts", version: "1.0.0" });

server.registerTool(
  "list_issues",
  {
    description: "Lists issues.",
    inputSchema: { count: z.number().int().optional(), failing: z.number().int().optional() },
    outputSchema: {
      issues: z.array(
        z.object({ id: z.number().int(), title: z.string(), state: z.enum(["open", "closed", "failed"]) }),
      ),
      total: z.number().int(),
      next: z.string().optional(),
    },
  },
  async ({ count = 2000, failing = 1234 }) => {
    const issues = Array.from({ length: count }, (_, id) => ({
      id,
      title: `issue number ${id}`,
      state: id === failing ? "failed" : id % 2 ? "open" : "closed",
    }));
    const output = { issues, total: count };
    return { content: [{ type: "text", text: JSON.stringify(output, null, 2) }], structuredContent: output };
  },
);

await server.connect(new StdioServerTransport());
