// src/host/mcp/sdk_errors.ts
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
function isTimeout(e) {
  return e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout;
}
function errorText(e) {
  if (e instanceof ProtocolError) return `MCP error ${e.code}: ${stripPrefix(e.message)}`;
  if (e instanceof SdkHttpError) {
    return `HTTP ${e.status ?? ""} ${stripPrefix(e.message)}`.replace(/\s+/g, " ");
  }
  if (e instanceof Error) return stripPrefix(e.message);
  return String(e);
}
function stripPrefix(m) {
  return m.replace(/^MCP error -?\d+: /, "");
}

export {
  isTimeout,
  errorText
};
