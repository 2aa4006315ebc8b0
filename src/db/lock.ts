import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`Another server (pid ${pid}) is already running on DATA_DIR ${dataDir}; stop it first or use another DATA_DIR`);
    this.name = 'DataDirLockedError';
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims DATA_DIR for this server process with a pid file, and returns its release. One server
 * per data folder is what lets the job loop return every `running` task to pending at start-up.
 * A pid file left by a process that died (or by this pid, as in a restarted container) is stale.
 */
export function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'server.pid');
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => {
        if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === String(process.pid)) fs.rmSync(file);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
      if (pid > 0 && pid !== process.pid && isRunning(pid)) throw new DataDirLockedError(dataDir, pid);
      fs.rmSync(file, { force: true });
    }
  }
}
