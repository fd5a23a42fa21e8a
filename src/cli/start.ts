// `npm start`: the whole platform on one machine, with one command.
//
//   PostgreSQL with pgvector (unless DATABASE_URL) → Temporal dev server (unless TEMPORAL_ADDRESS)
//   → secrets key → migrations → first-start bootstrap → api + worker → wait until ready → banner.
//
// Two processes: this file runs as a small *launcher* that re-runs itself as the *supervisor* in a
// process group of its own. A Ctrl-C in the terminal is delivered to the whole foreground process
// group; without the second group PostgreSQL, the Temporal server, the api and the worker would all get
// it at once and stop in no particular order. The launcher forwards the signal to the supervisor, which
// stops the api and worker first (draining), then Temporal, then PostgreSQL. The supervisor watches a
// pipe from the launcher, so it also shuts everything down if the launcher is killed outright.
//
// The parts, in start/ (the local PostgreSQL's own launcher is in postgres/):
//   launcher.ts        the launcher
//   supervisor.ts      the supervisor: signals, unexpected exits, the ordered shutdown
//   restarts.ts        restarting a crashed local PostgreSQL or Temporal dev server in place
//   sequence.ts        the start sequence, step by step, using:
//     obtain.ts          the binaries, obtained by tools/*.sh
//     ports.ts           the ports about to be bound are free
//     local-services.ts  the local PostgreSQL and Temporal dev server
//     secrets-key.ts     the key that encrypts secrets at rest
//     database-setup.ts  migrations and the first organization, user and API key
//     readiness.ts       waiting until Temporal, the api and the worker answer
//     banner.ts          what is printed once everything is ready
//   children.ts        child processes and their output     output.ts   the supervisor's own lines
//   running.ts         what has been started                paths.ts    where the repository is
import { launch, SUPERVISOR_FLAG } from './start/launcher';
import { supervise } from './start/supervisor';

if (process.argv.includes(SUPERVISOR_FLAG)) void supervise();
else launch(__filename);
