/* Shim for glibc 2.43's <dlfcn.h>, for tests/glibc_harness.c: the fields of struct dl_find_object
   that sframe.c reads (the host's older dlfcn.h has no dlfo_sframe).  */
#define DLFO_FLAG_SFRAME 1
struct dl_find_object
{
  unsigned long long dlfo_flags;
  void *dlfo_map_start;
  void *dlfo_map_end;
  void *dlfo_link_map;
  void *dlfo_eh_frame;
  void *dlfo_sframe;
};
