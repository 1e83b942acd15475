import { Module } from '@nestjs/common';
import { DashboardController } from './dashboard.controller.js';

/** The operators' web UI (`apps/dashboard`), served under `/ui`. */
@Module({ controllers: [DashboardController] })
export class DashboardModule {}
