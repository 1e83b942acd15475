import { Module } from '@nestjs/common';
import { CspReports } from './csp-reports.js';
import { DashboardController } from './dashboard.controller.js';

/** The operators' web UI (`apps/dashboard`), served under `/ui`, and its CSP reports. */
@Module({ controllers: [DashboardController], providers: [CspReports], exports: [CspReports] })
export class DashboardModule {}
