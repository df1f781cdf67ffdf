// SPDX-License-Identifier: GPL-2.0
/* A KCOV client written from Documentation/dev-tools/kcov.rst's example (the
 * same calls in the same order), run by tests/guest/kcov-guest.sh against
 * kjit's /sys/kernel/debug/kcov.  Every PC is printed with its kallsyms
 * symbol, one per line: "0xPC function+0xoff".  PCs are canonical (the
 * KASLR offset removed, as kernel/kcov.c does): with LINK_TEXT=ADDR (the
 * vmlinux's _text) in the environment, kallsyms is moved back by this
 * boot's offset to name them.
 *   kcov_client pc read                 covers read(-1, NULL, 0)
 *   kcov_client pc open PATH            covers openat(AT_FDCWD, PATH, O_RDONLY)
 *   kcov_client pc fault                covers a write to a fresh anonymous page
 *   kcov_client pc pipe                 covers a read of an empty pipe that
 *                                       another thread fills 300 ms later
 *   kcov_client pc small PATH           a one-page buffer (512 words): the
 *                                       openat of PATH fills it
 *   kcov_client cmp read5               KCOV_TRACE_CMP over read(/dev/null, 5 bytes):
 *                                       "type arg1 arg2 0xPC function+0xoff"
 *   kcov_client cmp wrap                cover[0] set to 2^59 (whose record index
 *                                       wraps 64 bits) before read(/dev/null):
 *                                       "count 0x..." must stay 2^59
 *   kcov_client threads                 two threads, two descriptors: one
 *                                       covers read(-1), the other openat of a
 *                                       missing file; prints "A ..." and "B ..."
 *   kcov_client disable                 PCs of read(-1) while enabled, then
 *                                       after KCOV_DISABLE: "after N" (must be 0)
 *   kcov_client bench N                 ns per read(-1, NULL, 0) over N calls:
 *                                       "bench plain X" (no coverage enabled in
 *                                       this thread), "bench pc X PCS",
 *                                       "bench cmp X RECORDS"
 *   kcov_client misuse                  the error cases: "case NAME got E want E" */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KCOV_INIT_TRACE _IOR('c', 1, unsigned long)
#define KCOV_ENABLE _IO('c', 100)
#define KCOV_DISABLE _IO('c', 101)
#define KCOV_REMOTE_ENABLE _IOW('c', 102, struct kcov_remote_arg)
#define COVER_SIZE (64 << 10)
#define KCOV_TRACE_PC 0
#define KCOV_TRACE_CMP 1
#define DEV "/sys/kernel/debug/kcov"

struct kcov_remote_arg {
  uint32_t trace_mode, area_size, num_handles;
  uint64_t common_handle __attribute__((aligned(8)));
  uint64_t handles[];
};

/* ---- kallsyms ---------------------------------------------------------- */
struct sym { unsigned long addr; char name[64]; };
static struct sym *syms;
static size_t nsyms;

static int by_addr(const void *a, const void *b) {
  unsigned long x = ((const struct sym *)a)->addr, y = ((const struct sym *)b)->addr;
  return x < y ? -1 : x > y;
}

static void load_syms(void) {
  FILE *f = fopen("/proc/kallsyms", "r");
  char line[256], type, name[200];
  unsigned long a, text = 0, offset = 0;
  const char *link_text = getenv("LINK_TEXT");
  size_t cap = 0;
  if (!f) { perror("/proc/kallsyms"); exit(1); }
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%lx %c %199s", &a, &type, name) == 3 && !strcmp(name, "_text")) { text = a; break; }
  if (link_text && text) offset = text - strtoul(link_text, NULL, 16);
  rewind(f);
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%lx %c %199s", &a, &type, name) == 3 && (type == 't' || type == 'T')) {
      a -= offset;
      if (nsyms == cap) syms = realloc(syms, (cap = cap ? 2 * cap : 65536) * sizeof *syms);
      syms[nsyms].addr = a;
      snprintf(syms[nsyms].name, sizeof syms[nsyms].name, "%.63s", name);
      nsyms++;
    }
  fclose(f);
  qsort(syms, nsyms, sizeof *syms, by_addr);
}

static void print_pc(const char *prefix, unsigned long pc) {
  size_t lo = 0, hi = nsyms;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (syms[mid].addr <= pc) lo = mid; else hi = mid;
  }
  if (nsyms && syms[lo].addr <= pc) printf("%s0x%lx %s+0x%lx\n", prefix, pc, syms[lo].name, pc - syms[lo].addr);
  else printf("%s0x%lx ?\n", prefix, pc);
}

/* ---- the example's steps ------------------------------------------------ */
static unsigned long *setup(int *fd, unsigned long words, unsigned long mode) {
  unsigned long *cover;
  *fd = open(DEV, O_RDWR);
  if (*fd == -1) perror("open"), exit(1);
  if (ioctl(*fd, KCOV_INIT_TRACE, words)) perror("ioctl"), exit(1);
  cover = mmap(NULL, words * sizeof(unsigned long), PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
  if ((void *)cover == MAP_FAILED) perror("mmap"), exit(1);
  if (ioctl(*fd, KCOV_ENABLE, mode)) perror("ioctl"), exit(1);
  __atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
  return cover;
}

static void teardown(int fd, unsigned long *cover, unsigned long words) {
  if (ioctl(fd, KCOV_DISABLE, 0)) perror("ioctl"), exit(1);
  if (munmap(cover, words * sizeof(unsigned long))) perror("munmap"), exit(1);
  if (close(fd)) perror("close"), exit(1);
}

static void print_pcs(const char *prefix, unsigned long *cover) {
  unsigned long n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
  for (unsigned long i = 0; i < n; i++) print_pc(prefix, cover[i + 1]);
}

static int pipe_w;
static void *fill_later(void *arg) {
  (void)arg;
  usleep(300000);
  if (write(pipe_w, "x", 1) != 1) perror("write");
  return NULL;
}

struct thread_job { int open_missing; unsigned long n, pcs[4096]; };
static pthread_barrier_t both_enabled;
/* One descriptor per thread, as kcov.rst says; both are enabled before
 * either makes its call, so the two traces are taken at the same time. */
static void *thread_main(void *arg) {
  struct thread_job *j = arg;
  unsigned long *cover;
  int fd;
  char c;
  cover = setup(&fd, COVER_SIZE, KCOV_TRACE_PC);
  pthread_barrier_wait(&both_enabled);
  __atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
  if (j->open_missing) {
    if (openat(AT_FDCWD, "/no/such/file", O_RDONLY) != -1) exit(1);
  } else if (read(-1, &c, 1) != -1) {
    exit(1);
  }
  j->n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
  for (unsigned long i = 0; i < j->n && i < 4096; i++) j->pcs[i] = cover[i + 1];
  teardown(fd, cover, COVER_SIZE);
  return NULL;
}

/* ---- misuse: each case with the error kernel/kcov.c gives ---------------- */
static int fails = 0;
static void expect(const char *name, int rc, int want) {
  int got = rc == -1 ? errno : 0;
  printf("case %s got %d want %d %s\n", name, got, want, got == want ? "ok" : "WRONG");
  if (got != want) fails++;
}

static int other_fd;
static void *disable_from_other_thread(void *arg) {
  (void)arg;
  expect("disable_from_another_thread", ioctl(other_fd, KCOV_DISABLE, 0), EINVAL);
  expect("enable_fd_enabled_by_another_thread", ioctl(other_fd, KCOV_ENABLE, KCOV_TRACE_PC), EINVAL);
  return NULL;
}

static int misuse(void) {
  int fd = open(DEV, O_RDWR), fd2;
  unsigned long words = 1024;
  void *m;
  /* kcov_ioctl_locked: KCOV_ENABLE needs mode INIT and an area */
  expect("enable_before_init", ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC), EINVAL);
  /* kcov_mmap: no area yet */
  m = mmap(NULL, words * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  expect("mmap_before_init", m == MAP_FAILED ? -1 : 0, EINVAL);
  /* kcov_ioctl: size < 2 or > INT_MAX / sizeof(unsigned long) */
  expect("init_size_1", ioctl(fd, KCOV_INIT_TRACE, 1ul), EINVAL);
  expect("init_size_too_big", ioctl(fd, KCOV_INIT_TRACE, 0x7fffffff / 8 + 1ul), EINVAL);
  expect("init", ioctl(fd, KCOV_INIT_TRACE, words), 0);
  /* mode is no longer DISABLED */
  expect("init_twice", ioctl(fd, KCOV_INIT_TRACE, words), EBUSY);
  /* kcov_mmap: the size must be the buffer's, the offset 0 */
  m = mmap(NULL, words * 8 / 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  expect("mmap_wrong_size", m == MAP_FAILED ? -1 : 0, EINVAL);
  m = mmap(NULL, words * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
  expect("mmap_offset", m == MAP_FAILED ? -1 : 0, EINVAL);
  /* kcov_get_mode */
  expect("enable_unknown_mode", ioctl(fd, KCOV_ENABLE, 2ul), EINVAL);
  /* kcov_ioctl: KCOV_DISABLE of a descriptor this thread has not enabled */
  expect("disable_not_enabled", ioctl(fd, KCOV_DISABLE, 0), EINVAL);
  /* default: -ENOTTY */
  expect("unknown_ioctl", ioctl(fd, _IO('c', 42), 0), ENOTTY);
  /* KCOV_REMOTE_ENABLE: too many handles, unreadable argument */
  struct kcov_remote_arg big = {.trace_mode = KCOV_TRACE_PC, .area_size = 1024, .num_handles = 0x101};
  expect("remote_too_many_handles", ioctl(fd, KCOV_REMOTE_ENABLE, &big), EINVAL);
  expect("remote_bad_pointer", ioctl(fd, KCOV_REMOTE_ENABLE, (void *)8), EFAULT);
  expect("enable", ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC), 0);
  /* kcov->t != NULL */
  /* the mode is no longer INIT */
  expect("enable_twice", ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC), EINVAL);
  /* t->kcov != NULL: a second descriptor in the same thread */
  fd2 = open(DEV, O_RDWR);
  expect("init_second_fd", ioctl(fd2, KCOV_INIT_TRACE, words), 0);
  expect("enable_second_fd_same_thread", ioctl(fd2, KCOV_ENABLE, KCOV_TRACE_PC), EBUSY);
  /* KCOV_DISABLE: the argument must be 0 */
  expect("disable_nonzero_arg", ioctl(fd, KCOV_DISABLE, 1ul), EINVAL);
  /* another thread: current->kcov != kcov, and kcov->t is set */
  pthread_t t;
  other_fd = fd;
  pthread_create(&t, NULL, disable_from_other_thread, NULL);
  pthread_join(t, NULL);
  expect("disable", ioctl(fd, KCOV_DISABLE, 0), 0);
  /* after a disable the descriptor can be enabled again */
  expect("enable_after_disable", ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC), 0);
  expect("disable_again", ioctl(fd, KCOV_DISABLE, 0), 0);
  close(fd2);
  close(fd);
  printf("misuse: %d wrong\n", fails);
  return fails != 0;
}

static double ns_per_read(long n) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++)
    if (read(-1, NULL, 0) != -1) exit(1);
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

static int bench(long n) {
  int fd;
  unsigned long *cover;
  printf("bench plain %.0f\n", ns_per_read(n));
  for (int mode = KCOV_TRACE_PC; mode <= KCOV_TRACE_CMP; mode++) {
    cover = setup(&fd, COVER_SIZE, mode);
    if (read(-1, NULL, 0) != -1) return 1;
    unsigned long per_call = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
    /* the buffer is reset before each call, as a fuzzer does per program */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
      __atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
      if (read(-1, NULL, 0) != -1) return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("bench %s %.0f %lu\n", mode == KCOV_TRACE_PC ? "pc" : "cmp",
           ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n, per_call);
    teardown(fd, cover, COVER_SIZE);
  }
  return 0;
}

int main(int argc, char **argv) {
  int fd;
  unsigned long *cover;
  char c;
  if (argc < 2) { fprintf(stderr, "usage: see the header of kcov_client.c\n"); return 2; }
  load_syms();
  if (!strcmp(argv[1], "misuse")) return misuse();
  if (!strcmp(argv[1], "bench") && argc == 3) return bench(atol(argv[2]));
  if (!strcmp(argv[1], "threads")) {
    static struct thread_job a = {0}, b = {1};
    pthread_t ta, tb;
    pthread_barrier_init(&both_enabled, NULL, 2);
    pthread_create(&ta, NULL, thread_main, &a);
    pthread_create(&tb, NULL, thread_main, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    for (unsigned long i = 0; i < a.n && i < 4096; i++) print_pc("A ", a.pcs[i]);
    for (unsigned long i = 0; i < b.n && i < 4096; i++) print_pc("B ", b.pcs[i]);
    return 0;
  }
  if (!strcmp(argv[1], "cmp")) {
    unsigned long buf[8];
    int dn = open("/dev/null", O_RDONLY);
    cover = setup(&fd, COVER_SIZE, KCOV_TRACE_CMP);
    if (argc == 3 && !strcmp(argv[2], "wrap")) {
      __atomic_store_n(&cover[0], 1ul << 59, __ATOMIC_RELAXED);
      if (read(dn, buf, 5) != 0) return 1;
      printf("count 0x%lx\n", __atomic_load_n(&cover[0], __ATOMIC_RELAXED));
      teardown(fd, cover, COVER_SIZE);
      return 0;
    }
    if (read(dn, buf, 5) != 0) return 1;
    unsigned long n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
    for (unsigned long i = 0; i < n && 1 + 4 * i + 3 < COVER_SIZE; i++) {
      char prefix[96];
      snprintf(prefix, sizeof prefix, "%lu 0x%lx 0x%lx ", cover[1 + 4 * i], cover[2 + 4 * i], cover[3 + 4 * i]);
      print_pc(prefix, cover[4 + 4 * i]);
    }
    teardown(fd, cover, COVER_SIZE);
    return 0;
  }
  if (!strcmp(argv[1], "disable")) {
    cover = setup(&fd, COVER_SIZE, KCOV_TRACE_PC);
    if (read(-1, &c, 1) != -1) return 1;
    unsigned long n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
    if (ioctl(fd, KCOV_DISABLE, 0)) perror("ioctl"), exit(1);
    __atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
    if (read(-1, &c, 1) != -1) return 1;
    printf("before %lu\nafter %lu\n", n, __atomic_load_n(&cover[0], __ATOMIC_RELAXED));
    return 0;
  }
  if (strcmp(argv[1], "pc") || argc < 3) { fprintf(stderr, "kcov_client: unknown mode\n"); return 2; }
  /* mmap maps whole pages, and the size must be the buffer's */
  unsigned long words = !strcmp(argv[2], "small") ? 4096 / sizeof(unsigned long) : COVER_SIZE;
  int p[2] = {-1, -1};
  pthread_t filler;
  if (!strcmp(argv[2], "pipe")) {
    if (pipe(p)) return 1;
    pipe_w = p[1];
  }
  cover = setup(&fd, words, KCOV_TRACE_PC);
  if (!strcmp(argv[2], "read")) {
    if (read(-1, NULL, 0) != -1) return 1;
  } else if ((!strcmp(argv[2], "open") || !strcmp(argv[2], "small")) && argc == 4) {
    int f = openat(AT_FDCWD, argv[3], O_RDONLY);
    /* the trace of the openat alone: the close below is a call of its own */
    unsigned long n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
    if (f >= 0) close(f);
    __atomic_store_n(&cover[0], n, __ATOMIC_RELAXED);
  } else if (!strcmp(argv[2], "fault")) {
    volatile char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 1;
    __atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
    page[0] = 1;
  } else if (!strcmp(argv[2], "pipe")) {
    pthread_create(&filler, NULL, fill_later, NULL);
    if (read(p[0], &c, 1) != 1) return 1;
    unsigned long n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
    pthread_join(filler, NULL);
    __atomic_store_n(&cover[0], n, __ATOMIC_RELAXED);
  } else {
    fprintf(stderr, "kcov_client: unknown call %s\n", argv[2]);
    return 2;
  }
  unsigned long n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
  print_pcs("", cover);
  if (!strcmp(argv[2], "small")) printf("count %lu\n", n);
  teardown(fd, cover, words);
  return 0;
}
