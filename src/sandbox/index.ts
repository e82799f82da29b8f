/** The sandbox gateway emulator (README.md beside this file). */
export { startSandbox } from './server';
export type { RunningSandbox, SandboxFixtures, StartOptions } from './server';
export type { SandboxLedger } from './ledger-view';
export type { FollowUpRecord, LedgerEntry, TxKind, TxState } from './lifecycle';
export { LIFECYCLE_ERRORS } from './follow-ups';
export { DEFAULT_SETTINGS, SettingsError } from './settings';
export type { SandboxSettings, EndpointKeySettings, SandboxRateMode, SandboxDeletedCardref } from './settings';
export { CARDREF_INVALID_ERROR_CODE, ERRORS, SALE_ERRORS } from './errors';
export type { ErrorSpec, GatewayErrorBody } from './errors';
export type { FaultControl, FaultKind, FaultMatch, FaultRates, FaultWhen, OneShotFault } from './faults';
export type { RecordedTransaction, Delivery } from './ledger';
export type { SandboxStats, EndpointStats } from './stats';
export type { FixtureCustomer, FixturePaymentMethod, TokenState } from './fixtures';
export { TEST_CARDS } from './cards';
export { apiHash, authorizationHeader } from './auth';
