/**
 * `src/obs/secrets.ts`: which values are secrets, masking in text, in JSON texts (valid JSON
 * after, also when a replacement would have broken it) and in values, and URL redaction.
 */
import assert from "node:assert/strict";
import { isCredentialParam, redactUrl, redactUrls, Secrets } from "../../src/obs/secrets.ts";
import { RunEnv } from "../../src/run_env.ts";
import { LuaFloat } from "../../src/json/values.ts";
import { parseJson, stringifyJson } from "../../src/json/codec.ts";

Deno.test("Secrets.fromEnv: the host's credential variables, no others; values under 8 characters are not secrets", () => {
  const s = Secrets.fromEnv(
    new RunEnv({
      ANTHROPIC_API_KEY: "sk-ant-aaaaaaaa",
      OPENAI_API_KEY: "short",
      AGENT_BLOCK_MESH_SECRET_KEY: "mesh-secret-value",
      GITHUB_TOKEN: "ghp_not_in_the_list",
    }),
  );
  assert.equal(s.size, 2);
  assert.equal(
    s.mask("a=sk-ant-aaaaaaaa b=short c=mesh-secret-value d=ghp_not_in_the_list"),
    "a=[redacted] b=short c=[redacted] d=ghp_not_in_the_list",
  );
  const none = Secrets.fromEnv(new RunEnv({}));
  const text = "nothing to hide";
  assert.equal(none.mask(text), text);
  assert.equal(none.maskJson(`{"a":"b"}`), `{"a":"b"}`);
});

Deno.test("Secrets.mask: every occurrence, the longest value first, the trimmed form too", () => {
  const s = new Secrets();
  s.add("abcdefgh");
  s.add("abcdefghIJKL");
  s.add("  padded-secret\n");
  s.add(undefined);
  assert.equal(s.mask("abcdefghIJKL abcdefgh abcdefghIJKL"), "[redacted] [redacted] [redacted]");
  assert.equal(s.mask("key: padded-secret."), "key: [redacted].");
});

Deno.test("Secrets.maskJson: escaped values are found; a replacement that would break the JSON masks the strings instead", () => {
  const s = new Secrets();
  s.add('quote"and\\slash');
  s.add("nwords-after-a-newline");
  s.add("12345678901");
  // the escaped form of a value with a quote and a backslash
  const quoted = stringifyJson({ msg: 'x quote"and\\slash y' });
  assert.equal(s.maskJson(quoted), `{"msg":"x [redacted] y"}`);
  // "\n" before "words...": the text "\nwords..." holds the value from the escape's "n" on, which
  // the string does not (it holds a newline); replacing there would also leave "\[redacted]"
  const escaped = stringifyJson({
    msg: "line\nwords-after-a-newline",
    real: "nwords-after-a-newline",
    f: new LuaFloat(3),
  });
  const masked = s.maskJson(escaped);
  assert.deepEqual(
    parseJson(masked),
    parseJson(stringifyJson({ msg: "line\nwords-after-a-newline", real: "[redacted]", f: new LuaFloat(3) })),
  );
  assert.match(masked, /"f":3\.0/, "an integral float keeps its floatness");
  // digits of a number are not text: the number stays, the string is masked
  const num = s.maskJson(`{"id":12345678901,"s":"12345678901"}`);
  assert.deepEqual(JSON.parse(num), { id: 12345678901, s: "[redacted]" });
});

Deno.test("Secrets.maskValue: strings at any depth, keys too; other values untouched", () => {
  const s = new Secrets();
  s.add("sk-value-12345");
  const f = new LuaFloat(1);
  assert.deepEqual(
    s.maskValue({ a: ["x sk-value-12345", { "sk-value-12345": true, n: 1, f }], b: null }),
    { a: ["x [redacted]", { "[redacted]": true, n: 1, f }], b: null },
  );
});

Deno.test("redactUrl(s): userinfo removed, credential-like parameter values replaced, the rest kept", () => {
  assert.equal(redactUrl("https://user:p@ss@host.example:8443/a/b?x=1"), "https://host.example:8443/a/b?x=1");
  assert.equal(
    redactUrl("http://h/p?q=cats&api_key=A&key=B&token=C&access_token=D&password=E&X-Amz-Signature=F&page=2"),
    "http://h/p?q=cats&api_key=[redacted]&key=[redacted]&token=[redacted]&access_token=[redacted]" +
      "&password=[redacted]&X-Amz-Signature=[redacted]&page=2",
  );
  assert.equal(
    redactUrl("https://h/cb#access_token=T&state=s"),
    "https://h/cb#access_token=[redacted]&state=s",
  );
  assert.equal(
    redactUrls(`GET failed (url: "wss://bob:pw@h/x?sessionid=S1"); retry https://h/?keyword=fine`),
    `GET failed (url: "wss://h/x?sessionid=[redacted]"); retry https://h/?keyword=fine`,
  );
  assert.equal(redactUrls("no url here: key=value"), "no url here: key=value");
  for (
    const name of [
      "apiKey",
      "api-key",
      "client_secret",
      "refresh_token",
      "pwd",
      "sig",
      "auth",
      "X-Amz-Credential",
    ]
  ) {
    assert.ok(isCredentialParam(name), name);
  }
  for (const name of ["q", "page", "keyword", "state", "id"]) assert.ok(!isCredentialParam(name), name);
});

Deno.test("Secrets.scrub: values masked, then URLs redacted", () => {
  const s = new Secrets();
  s.add("the-long-key-123");
  assert.equal(
    s.scrub("http://u:pw@h/?token=t said the-long-key-123"),
    "http://h/?token=[redacted] said [redacted]",
  );
});

Deno.test("Secrets.addUrl / addHeaders / addEnv: the credentials a block hands over on purpose", () => {
  const s = new Secrets();
  s.addUrl("https://bob:pa%24%24word-123@mcp.example/sse?token=tok-abcdef-123&page=20000000");
  s.addHeaders({
    Authorization: "Bearer bearer-token-123",
    "X-Api-Key": "header-key-123",
    Accept: "text/plain-long",
  });
  s.addEnv({ GITHUB_TOKEN: "ghp-env-token-123", DB_PASSWORD: "env-password-1", LANG: "en_US.UTF-8" });
  assert.equal(
    s.mask(
      "pa$$word-123 tok-abcdef-123 20000000 Bearer bearer-token-123 header-key-123 text/plain-long " +
        "ghp-env-token-123 env-password-1 en_US.UTF-8",
    ),
    "[redacted] [redacted] 20000000 [redacted] [redacted] text/plain-long [redacted] [redacted] en_US.UTF-8",
  );
});
