/** The version of agent-block, as `--version` prints it and the MCP server announces it. */
export const VERSION = "0.1.0";
