/* A callback called from inside libc (qsort), whose static AArch64 build has no SFrame:
   the unwinder crosses libc's frames by the frame-pointer chain and must land back in sorter. */
#include <stdio.h>
#include <stdlib.h>
volatile int sink;
__attribute__((noinline)) void stop_here(int x){ sink = x; *(volatile int *)(long)(sink - x) = x; }
__attribute__((noinline)) int cmp(const void *a, const void *b){
    int x = *(const int *)a, y = *(const int *)b;
    if (x == 3 || y == 3) stop_here(x);
    return x - y;
}
__attribute__((noinline)) void sorter(int n){ int v[8] = {5, 1, 7, 3, 2, 8, 6, 4}; qsort(v, n, sizeof v[0], cmp); sink = v[0]; }
int main(int argc, char **argv){ sorter(7 + argc); printf("%d\n", sink); return 0; }
