// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Always compiles: if it does not, the probe build itself is broken and
 * every other answer would be a false "no".
 */
#include <linux/module.h>

void sroce_probe(void);
void sroce_probe(void)
{
}
