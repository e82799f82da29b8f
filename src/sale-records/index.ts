/** Per-sale records: ownership and money bounds decided in Redis, no card data. */
export { createRedisSaleRecords, type RedisSaleRecordsOptions } from './redis-sale-records';
export { createMemorySaleRecords } from './memory-sale-records';
export { SALE_RECORD_TTL_MS, ACH_RANK, type ReserveResult, type Reservation, type SaleFields, type BankFields, type AchStatus, type SaleMoves, type SaleRecord, type SaleRecords, type SaleState, type Settlement, type SaleView, type ListedSaleRefund, type OwnRefund, type GatewaySaleState, type ReservedOp, type Heard, type HeardRefund, type HearResult, type RecordChange, type RecordChangeSink } from './types';
export { decodeSaleFields, encodeSaleFields, SALE_FIELD_NAMES } from './fields';
