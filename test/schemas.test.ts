import { describe, expect, it } from "vitest";
import { hookSchema, jsonSchema, SCHEMA_NAMES, type SchemaName } from "../src/schemas.js";

describe("isohook/schemas", () => {
  it("gives every named shape as a JSON Schema document of plain data", () => {
    for (const name of SCHEMA_NAMES) {
      const schema = jsonSchema(name);
      expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
      expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    }
    expect(jsonSchema("ToolCall")).toMatchObject({ type: "object", required: ["id", "name", "args"] });
  });

  it("marks fields with defaults optional in the input schema only", () => {
    expect(jsonSchema("Limits", "output").required).toContain("timeoutMs");
    expect(jsonSchema("Limits", "input").required ?? []).not.toContain("timeoutMs");
  });

  it("gives a hook point's event and results", () => {
    expect(hookSchema("tool.call")).toMatchObject({ title: "tool.call", properties: { event: {}, result: {} } });
  });

  it("refuses an unknown name, listing the known ones", () => {
    expect(() => jsonSchema("Nope" as SchemaName)).toThrow(
      /Unknown schema `Nope`\. Known schemas: ApprovalDecision, BundleManifest, CheckpointBody/,
    );
  });
});
