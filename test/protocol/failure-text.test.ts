import { describe, expect, it } from "vitest";
import { failureText } from "../../src/protocol/index.js";

describe("failureText", () => {
  it("is the code and message when there are no issues", () => {
    expect(failureText({ code: "threw", message: "Error: boom" })).toBe("threw: Error: boom");
  });

  it("adds up to three issues with their result path and counts the rest", () => {
    const issues = [
      { path: ["type"], message: "Invalid option" },
      { path: ["args", "cmd", 0], message: "Expected string" },
      { path: [], message: "Too big" },
      { path: ["x"], message: "y" },
    ];
    expect(failureText({ code: "invalid_result", message: "Bad", issues })).toBe(
      "invalid_result: Bad — result.type: Invalid option; result.args.cmd[0]: Expected string; result: Too big (+1 more)",
    );
  });
});
