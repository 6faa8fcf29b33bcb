/**
 * Stand-alone entry of the simulator until the CLI wires `watchcache
 * simulate`: `node dist/src/sim/main.js [simulate options]`.
 */
import { runSimulateCommand } from './simulate-command.js';

process.exitCode = await runSimulateCommand(process.argv.slice(2));
