/**
 * @kiln/mcp — kiln's MCP server (stdio): task context packs and code-graph queries for agents.
 * Importing this module starts nothing and reads nothing; `runStdioServer` serves.
 */
export { createKilnMcpServer, GraphState, KILN_MCP_VERSION, RESOURCE_SCHEMA, RESOURCE_SNAPSHOT, RESOURCE_SUMMARY, type KilnMcpOptions } from './server.js';
export { parseMcpArgs, runStdioServer, USAGE } from './stdio.js';
