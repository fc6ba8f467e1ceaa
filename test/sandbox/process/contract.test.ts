import { createHookExecutor } from "../../../sandbox/supervisor/index.js";
import { describeExecutorContract } from "../executor-contract.js";

describeExecutorContract("process", (limits) => createHookExecutor({ limits, workers: 2, spareWorker: false }));
