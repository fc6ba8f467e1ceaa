import { createInlineExecutor } from "../../../sandbox/worker/index.js";
import { describeExecutorContract } from "../executor-contract.js";

describeExecutorContract("inline", (limits) => createInlineExecutor({ limits, quiet: true }));
