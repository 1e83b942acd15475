/**
 * Which country and AS a client address is in, by the site's own snapshot: the datasets its
 * rules are evaluated with. The newest snapshot of each site is kept open (range tables shared
 * with the previous one when the datasets did not change, so a rule change costs nothing here)
 * and reopened when a newer version is published. Each open snapshot remembers the labels of the
 * addresses it was last asked about: the same few thousand addresses come back in every batch
 * of an attack, and looking one up in the range tables costs more than remembering it.
 */
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { labelsOfAddress } from '@rampart/rules-core/ip/range-table';
import { openSnapshot, type Snapshot } from '@rampart/rules-core/snapshot/reader';
import { unpackCountry } from '@rampart/rules-core/snapshot/schema';
import { SnapshotsService } from '../snapshots/snapshots.service.js';
import { DataDir } from '../storage/data-dir.js';
import type { AddressLabels, Labeler } from './report-store.js';

const NONE: Labeler = () => ({ country: null, asn: null });

/** Addresses whose labels each open snapshot remembers (a botnet sends batch after batch). */
const REMEMBERED = 50_000;

interface Open {
  readonly sha256: string;
  readonly snapshot: Snapshot;
  readonly label: Labeler;
}

@Injectable()
export class AddressLabelsService implements OnModuleDestroy {
  /** Per site: the snapshot being opened or open, and what it was opened for. */
  private readonly open = new Map<
    string,
    { readonly target: string; readonly opening: Promise<Open | null> }
  >();

  constructor(
    private readonly snapshots: SnapshotsService,
    private readonly dataDir: DataDir,
  ) {}

  /** A labeler for `siteId`'s newest snapshot; one that knows nothing while it has none. */
  async labelerFor(siteId: string): Promise<Labeler> {
    const latest = await this.snapshots.latest(siteId);
    if (!latest) return NONE;
    let entry = this.open.get(siteId);
    if (entry?.target !== latest.sha256) {
      const previous = entry ? await entry.opening : null;
      entry = this.open.get(siteId); // another caller may have started the same open meanwhile
      if (entry?.target !== latest.sha256) {
        entry = { target: latest.sha256, opening: this.load(latest.sha256, previous) };
        this.open.set(siteId, entry);
      }
    }
    const current = await entry.opening;
    return current ? current.label : NONE;
  }

  onModuleDestroy(): void {
    for (const { opening } of this.open.values()) void opening.then((o) => o?.snapshot.close());
    this.open.clear();
  }

  private async load(sha256: string, previous: Open | null): Promise<Open | null> {
    try {
      // The hub's own published file: verified when it was built, not checked again.
      const snapshot = await openSnapshot(this.dataDir.snapshotPath(sha256), {
        integrityCheck: false,
        reuseTablesOf: previous?.snapshot,
      });
      previous?.snapshot.close();
      return { sha256, snapshot, label: remembering(labelerOf(snapshot)) };
    } catch {
      return previous; // a removed or unreadable file: keep labelling with what we had
    }
  }
}

/** Labels from the country and ASN tables of `snapshot`. */
export function labelerOf(snapshot: Snapshot): Labeler {
  return (ip: string): AddressLabels => {
    const country = labelsOfAddress(snapshot.tables.country, ip);
    const asn = labelsOfAddress(snapshot.tables.asn, ip);
    return {
      country: country.length > 0 ? unpackCountry(country[0] as number) : null,
      asn: asn.length > 0 ? (asn[0] as number) : null,
    };
  };
}

/** `label`, remembering the answers for up to {@link REMEMBERED} addresses (then starting over). */
function remembering(label: Labeler): Labeler {
  const known = new Map<string, AddressLabels>();
  return (ip: string): AddressLabels => {
    let labels = known.get(ip);
    if (labels === undefined) {
      if (known.size >= REMEMBERED) known.clear();
      labels = label(ip);
      known.set(ip, labels);
    }
    return labels;
  };
}
