// SPDX-License-Identifier: GPL-2.0
/* vm_flags is changed through vm_flags_set() (the field is read-only). */
#include <linux/mm.h>
void kjit_conftest_vm_flags_set(struct vm_area_struct *vma);
void kjit_conftest_vm_flags_set(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
}
