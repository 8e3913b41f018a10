import { parseArgs, USAGE, UsageError } from './options.js';
import { runLobby } from './run.js';

try {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const lobby = await runLobby(options, (line) => console.log(line));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(130);
    stopping = true;
    console.log(`${signal}: closing`);
    lobby.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
} catch (e) {
  if (e instanceof UsageError) {
    console.error(`netplay-lobby: ${e.message}`);
    process.exit(2);
  }
  console.error(`netplay-lobby: ${(e as Error).message}`);
  process.exit(1);
}
