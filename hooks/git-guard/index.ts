import { defineHooks } from "isohook/hook-sdk";

/**
 * Guards git tools and audits them off the run's path. The `toolCall` matcher (`git_*`) means calls of any
 * other tool never reach the sandbox; the observe-only handlers count git calls in their own `ctx.state`,
 * log failed ones and summarise at the end of the run, after each decision and without the run waiting.
 */
export default defineHooks({
  toolCall: {
    tools: ["git_*"],
    handler(event) {
      const { args } = event.call;
      if (event.call.name === "git_push" && args.force === true) {
        return { type: "block", reason: "force-pushing is not allowed; push without force" };
      }
      if (event.call.name === "git_push" && args.branch === "main") {
        return { type: "block", reason: "push to a branch and open a pull request; main is protected" };
      }
      return undefined;
    },
  },
  observe: {
    toolResult: {
      tools: ["git_*"],
      handler(event, ctx) {
        ctx.state.gitCalls = Number(ctx.state.gitCalls ?? 0) + 1;
        if (event.result.isError) console.warn(`${event.call.name} failed: ${event.result.content.slice(0, 80)}`);
      },
    },
    runEnd(event, ctx) {
      console.log(`${Number(ctx.state.gitCalls ?? 0)} git call(s) in a run that ended ${event.stopReason}`);
    },
  },
});
