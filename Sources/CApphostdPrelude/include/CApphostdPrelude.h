#ifndef CAPPHOSTDPRELUDE_H
#define CAPPHOSTDPRELUDE_H
/// 0 when the constructor blocked the lifecycle signals before main; an errno value otherwise.
int apphostd_prelude_block_result(void);
#endif
