/* Shim for glibc's internal <ldsodefs.h>, for tests/glibc_harness.c: sframe.c reaches the dynamic
   linker's _dl_find_object through GLRO; the harness answers with the section it was given.  */
#define GLRO(name) harness_##name
struct dl_find_object;
int harness_dl_find_object (void *address, struct dl_find_object *result);
