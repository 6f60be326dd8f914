import { BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";

// the script path is relative to the project root beside it, where the run also works
const project = new URL(".", import.meta.url).pathname;
const report = await runBlock(BlockConfig.builder(ScriptSource.path("blocks/hello.lua"), project).prompt("you").build());
console.log(report.value ?? report.error?.message);
