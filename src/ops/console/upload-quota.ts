import { readdir, stat } from "node:fs/promises";
import path from "node:path";

/** One upload being received: takes its bytes from the quota as they come. */
export interface QuotaTicket {
  /** Whether `bytes` more fit under the quota; they are counted when they do. */
  take(bytes: number): boolean;
  /** What the other uploads take now (kept, and being received), for the refusal: this one's bytes are not kept. */
  usage(): { usedBytes: number; quotaBytes: number };
  /** The upload is kept (its bytes stay counted) or removed (they are given back). */
  end(kept: boolean): void;
}

export interface UploadQuota {
  /** Starts counting the upload that will fill `dir`, a folder of the uploads folder. */
  begin(dir: string): Promise<QuotaTicket>;
}

/** Bytes of the files under `dir`, its sub-folders included; 0 when it is gone. */
async function bytesUnder(dir: string): Promise<number> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(full);
    else if (entry.isFile()) total += (await stat(full).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/**
 * A byte quota on the uploads folder, shared by the uploads of one ops
 * server. What is on disk is measured when an upload starts (uploads go away
 * by age, or by hand, between two); uploads being received are counted by
 * the bytes they have taken, so twenty at once cannot each see the same room.
 */
export function uploadQuota(root: string, quotaBytes: number): UploadQuota {
  const receiving = new Map<string, number>();
  let onDisk = 0;
  // Bumped when an upload ends, so a measure taken across it is taken again.
  let generation = 0;
  const receivingBytes = () => [...receiving.values()].reduce((a, b) => a + b, 0);

  const measure = async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const seen = generation;
      const names = await readdir(root).catch(() => [] as string[]);
      let total = 0;
      for (const name of names) {
        const dir = path.join(root, name);
        // A folder being received is counted by what it took, not by what is written yet.
        if (!receiving.has(dir)) total += await bytesUnder(dir);
      }
      if (seen === generation || attempt === 2) {
        onDisk = total;
        return;
      }
    }
  };

  return {
    async begin(dir) {
      receiving.set(dir, 0);
      await measure();
      let ended = false;
      return {
        take(bytes) {
          if (ended) return false;
          if (onDisk + receivingBytes() + bytes > quotaBytes) return false;
          receiving.set(dir, (receiving.get(dir) ?? 0) + bytes);
          return true;
        },
        usage: () => ({ usedBytes: onDisk + receivingBytes() - (receiving.get(dir) ?? 0), quotaBytes }),
        end(kept) {
          if (ended) return;
          ended = true;
          if (kept) onDisk += receiving.get(dir) ?? 0;
          receiving.delete(dir);
          generation++;
        },
      };
    },
  };
}
