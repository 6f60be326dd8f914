import * as root from "@a2a-js/sdk";
console.log(Object.keys(root).join(" "));
const m = root.Message.fromJSON({ messageId: "x", role: "ROLE_USER", parts: [{ text: "hi" }, { data: { a: 1 } }], metadata: { skill: "s" } });
console.log(JSON.stringify(m), JSON.stringify(root.Message.toJSON(m)));
console.log(JSON.stringify(root.Task.toJSON(root.Task.fromJSON({id:"t",contextId:"c",status:{state:"TASK_STATE_COMPLETED"},artifacts:[{artifactId:"a",parts:[{text:"x"}]}]}))));
