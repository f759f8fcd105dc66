/*
 * fake_add.c - a weak pcw_add_instance() that records its last call (see
 * fake_add.h). A real definition anywhere (a library's, or a static inline
 * one in <pcw/callback.h>) takes precedence, and the Add tests skip.
 */
#include <stddef.h>

#include "fake_add.h"

pcw_fake_add_call pcw_fake_add_last;

/* pcw_data's layout, without including pcw headers. */
struct fake_data {
    const void *data;
    uint32_t size;
};

static int fake_add(void *buf, const char *name, uint32_t id, uint32_t count,
                    const struct fake_data *data)
{
    pcw_fake_add_call c = {0};
    c.calls = pcw_fake_add_last.calls + 1;
    c.buffer = buf, c.name = name, c.id = id, c.count = count;
    if (count > 0 && data)
        c.data0 = data[0].data, c.size0 = data[0].size;
    if (count > 1 && data)
        c.data1 = data[1].data, c.size1 = data[1].size;
    pcw_fake_add_last = c;
    return 0;
}

int pcw_add_instance(void *buf, const char *name, uint32_t id, uint32_t count,
                     const struct fake_data *data) __attribute__((weak, alias("fake_add")));

pcw_fake_fn pcw_fake_add_fn(void)
{
    return (pcw_fake_fn)fake_add;
}
