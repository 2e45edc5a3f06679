/* pn_acpi.c -- ACPI SLIT and SRAT table parsers (ACPI 6.5 sections 5.2.16, 5.2.17).
 *
 * Raw bytes of /sys/firmware/acpi/tables/{SLIT,SRAT} in, plain structs out;
 * twin: pynuma/_pure_acpi.py (identical acceptance and values).
 */
#include <string.h>

#include "pn.h"

#define HEADER_LEN 36
#define SLIT_MIN (HEADER_LEN + 8)
#define SRAT_MIN (HEADER_LEN + 12)
#define LOCAL_DISTANCE 10

static uint32_t u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t u64(const uint8_t *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

int pn_acpi_check(const uint8_t *data, size_t len, const char *sig, size_t min_len)
{
    if (len < min_len) return PN_ACPI_TRUNCATED;
    if (memcmp(data, sig, 4) != 0) return PN_ACPI_SIGNATURE;
    if ((size_t)u32(data + 4) != len || len > UINT32_MAX) return PN_ACPI_LENGTH;
    uint8_t sum = 0;
    for (size_t i = 0; i < len; i++) sum = (uint8_t)(sum + data[i]);
    return sum ? PN_ACPI_CHECKSUM : PN_ACPI_OK;
}

int pn_slit_parse(const uint8_t *data, size_t len, uint64_t *count, size_t *entries_off)
{
    int rc = pn_acpi_check(data, len, "SLIT", SLIT_MIN);
    if (rc) return rc;
    uint64_t n = u64(data + HEADER_LEN);
    *count = n;
    *entries_off = SLIT_MIN;
    /* n*n must equal what is left; n above 2^32 cannot fit a 32-bit length */
    if (n > 0xffffffffu || n * n != (uint64_t)(len - SLIT_MIN)) return PN_ACPI_COUNT;
    return PN_ACPI_OK;
}

int pn_slit_valid(const uint8_t *e, size_t n, size_t *bad_i, size_t *bad_j)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            uint8_t v = e[i * n + j];
            if (i == j ? v != LOCAL_DISTANCE : v <= LOCAL_DISTANCE) {
                *bad_i = i;
                *bad_j = j;
                return 0;
            }
        }
    return 1;
}

/* minimum subtable length for types 0..6, 0 = unknown type */
static const uint8_t srat_min[] = {16, 40, 24, 18, 12, 32, 32};

static void srat_entry(const uint8_t *d, unsigned type, unsigned rev, pn_srat_entry *e)
{
    memset(e, 0, sizeof *e);
    e->type = type;
    switch (type) {
    case 0: /* processor local APIC/SAPIC: domain bits 8-31 only from revision 2 */
        e->domain = d[2];
        if (rev >= 2) e->domain |= ((uint32_t)d[9] | (uint32_t)d[10] << 8 | (uint32_t)d[11] << 16) << 8;
        e->hwid = d[3];
        e->flags = u32(d + 4);
        break;
    case 1: /* memory: revision 1 tables have an 8-bit domain */
        e->domain = u32(d + 2);
        if (rev <= 1) e->domain &= 0xff;
        e->base = u64(d + 8);
        e->length = u64(d + 16);
        e->flags = u32(d + 28);
        break;
    case 2: /* processor local x2APIC */
        e->domain = u32(d + 4);
        e->hwid = u32(d + 8);
        e->flags = u32(d + 12);
        break;
    case 3: /* GICC */
        e->domain = u32(d + 2);
        e->hwid = u32(d + 6);
        e->flags = u32(d + 10);
        break;
    case 4: /* GIC ITS */
        e->domain = u32(d + 2);
        e->hwid = u32(d + 8);
        break;
    default: /* 5 generic initiator, 6 generic port */
        e->domain = u32(d + 4);
        e->flags = u32(d + 24);
        break;
    }
}

int pn_srat_parse(const uint8_t *data, size_t len, pn_srat_entry *out, size_t cap,
                  size_t *count, size_t *bad_off, unsigned *revision)
{
    int rc = pn_acpi_check(data, len, "SRAT", SRAT_MIN);
    *count = 0;
    if (rc) return rc;
    unsigned rev = data[8];
    *revision = rev;
    size_t off = SRAT_MIN, k = 0;
    while (off < len) {
        *bad_off = off;
        if (len - off < 2) return PN_ACPI_SUBTABLE;
        unsigned type = data[off], sublen = data[off + 1];
        if (sublen < 2 || off + sublen > len) return PN_ACPI_SUBTABLE;
        if (type < sizeof srat_min) {
            if (sublen < srat_min[type]) return PN_ACPI_SUBTABLE_SHORT;
            if (k < cap) srat_entry(data + off, type, rev, &out[k]);
            k++;
        }
        off += sublen;
    }
    *count = k;
    return PN_ACPI_OK;
}
