import type { ImportIssue } from '@rampart/rules-core/datasets/dataset';
import { DatasetKind } from '../database/schema.js';

export interface CheckInput {
  readonly kind: DatasetKind;
  readonly name: string;
  readonly path: string;
  readonly onBadLine: 'skip' | 'reject';
}

export type CheckMessage =
  | {
      readonly ok: true;
      readonly entries: number;
      readonly lines: number;
      readonly skippedLines: number;
      readonly issues: readonly ImportIssue[];
    }
  | {
      readonly ok: false;
      readonly message: string;
      readonly issueCount: number;
      readonly issues: readonly ImportIssue[];
    };
