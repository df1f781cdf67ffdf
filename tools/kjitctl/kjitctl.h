/* SPDX-License-Identifier: GPL-2.0 */
/* kjitctl: what its command files share.  `kjitctl X` is cmd_X in X.c
 * (perf's builtin-*.c); commands.c is the one list of commands, their
 * usage lines and their option tables, which the help test checks against
 * the man page; the other .c files are helpers several commands use.
 * Declarations only. */
#ifndef KJITCTL_H
#define KJITCTL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "uapi/kjit/ioctl.h"

/* The ABI this kjitctl speaks: the header's, or another one in the build
 * that tests the mismatch message (kjitctl-other-abi, tests/guest/record.sh). */
#ifndef KJITCTL_ABI
#define KJITCTL_ABI KJIT_ABI_VERSION
#endif

/* ---- commands (commands.c, kjitctl.c) ----------------------------------- */
/* argv[0] is the command's name; the result is the exit status. */
typedef int command_fn(int argc, char **argv);

#define KJITCTL_NO_DEVICE 1u        /* runs without /dev/kjit (its arguments are its own) */
#define KJITCTL_DEVICE_OPTIONAL 2u  /* runs without /dev/kjit too (kjit_fd -1) */
#define KJITCTL_LATE_DEVICE 4u      /* opens /dev/kjit itself (open_dev) once its option
                                       values are checked: a usage error needs no module */

struct kjitctl_command {
  const char *name;
  command_fn *run;
  const char *usage;              /* its lines of `kjitctl --help` */
  int (*help)(FILE *to);          /* `kjitctl NAME --help` when more than usage */
  const struct option *options;   /* the getopt_long table it parses, or NULL */
  unsigned flags;                 /* KJITCTL_NO_DEVICE, KJITCTL_DEVICE_OPTIONAL */
  const char *shortopts;          /* getopt's string it parses with, or NULL */
  int min_operands, max_operands; /* after the options; max -1: any number */
};
extern const struct kjitctl_command kjitctl_commands[];
extern const size_t kjitctl_ncommands;
const struct kjitctl_command *find_command(const char *name);

/* The arguments checked against the command's entry (options.c): 0, or
 * 2 after a message and the command's usage. */
int check_arguments(const struct kjitctl_command *cmd, int argc, char **argv);
int command_usage_error(const struct kjitctl_command *cmd);
/* A number option's value, strictly (0x.. too), at most max: 0, or 2 after
 * a message. */
int option_uint(const char *cmd, const char *opt, const char *v, unsigned long max, unsigned *out);

extern const char *kjitctl_path;   /* argv[0] of kjitctl */
int usage(void);                   /* every command's usage on stderr; 2 */
/* A command whose one option is --json (its option table `opts`): 0 with
 * *json set, or usage()'s status. */
int parse_json_only(int argc, char **argv, const struct option *opts, int *json);

command_fn cmd_attach, cmd_blocks, cmd_calls, cmd_capture, cmd_config, cmd_departures, cmd_detach,
    cmd_flush, cmd_kcov, cmd_list, cmd_record, cmd_report, cmd_reset, cmd_show, cmd_stats, cmd_top;
int record_help(FILE *to), kcov_help(FILE *to), top_help(FILE *to);

/* The option tables of the commands that take options (in their files). */
extern const struct option attach_options[], blocks_options[], calls_options[], capture_options[],
    config_options[], departures_options[], kcov_options[], record_options[], show_options[],
    top_options[];

/* ---- /dev/kjit (device.c) ----------------------------------------------- */
extern int kjit_fd;
int open_dev(void);   /* with the version handshake; -1 after a message */
/* The same, but 1 without a message when the module is not loaded or
 * kjitctl is not root (kjit_dev_errno says which). */
int open_dev_optional(void);
extern int kjit_dev_errno;
/* A kernel file's path: below $KJITCTL_SYSROOT when set (sysroot.c). */
const char *kernel_path(const char *path);
/* Why /dev/kjit is missing on this machine, on stderr (module_help.c). */
void explain_missing_module(void);
/* The lockdown LSM's mode into MODE when lockdown is on: 1; else 0 (device.c). */
int kernel_lockdown(char *mode, size_t len);
int get_stats(struct kjit_ioc_stats *s);
/* The configured tool's records (a buffer reused by the next call). */
struct kjit_ioc_rec *get_results(struct kjit_ioc_results *r);
const char *tool_name(uint32_t tool);
int tool_by_name(const char *n);   /* -1 when unknown */
const char *tool_names_list(void); /* "none, icount, ...", for messages */

/* ---- kernel symbols from /proc/kallsyms (ksyms.c) ------------------------ */
struct sym { unsigned long long addr; char *name; };
extern struct sym *syms;   /* text symbols, sorted by address */
extern size_t nsyms;
void load_syms(void);
const char *symbolize(unsigned long long a, char *buf, size_t len);   /* name+0xoff */
unsigned long long ksym_addr(const char *name);   /* 0 when there is none */
long sym_index(unsigned long long a);             /* the symbol holding a, or -1 */
int kjit_ksym_exists(const char *name);

/* ---- canonical addresses (canonical.c) ----------------------------------- */
/* How far KASLR moved the kernel image (from the version handshake). */
extern unsigned long long kjit_kaslr_offset;
/* The running kernel image, [_text, _end), from /proc/kallsyms. */
void kernel_image_range(unsigned long long *lo, unsigned long long *hi);
/* A kernel image address without the KASLR offset; others unchanged. */
unsigned long long canonical_addr(unsigned long long a);

/* ---- lists of names with a hash index (names.c) ------------------------- */
struct names {
  char **v;
  size_t n, cap;
  size_t *index, index_cap;   /* positions + 1 by hash; names.c keeps it */
};
struct names *names_new(void);
void names_add(struct names *s, const char *name);
void names_add_new(struct names *s, const char *name);   /* unless it is there */
int names_has(const struct names *s, const char *name);
size_t names_find(const struct names *s, const char *name);   /* position + 1, or 0 */
void names_uniq(struct names *s);   /* sorted, each once */

/* ---- targets: globs, kjit's verdicts (targets.c) ------------------------- */
extern const char *const filter_functions_paths[2];   /* tracefs, then debugfs */
int names_from_glob(const char *glob, struct names *out);
int names_from_file(const char *path, struct names *out);
const struct names *attachable(void);   /* what ftrace can attach, sorted */
int is_glob(const char *t);
int expand_target(const char *t, struct names *out);
const char *refusal(int err);           /* why kjit refuses a function */
const char *attach_refusal(int err);    /* the same, as a parenthesis after strerror */
int check_names(const struct names *s, int32_t *res);
/* Without the module (offline_verdicts.c): why kjit would refuse the
 * function, when kallsyms or debugfs tell, else NULL; and what told. */
const char *offline_refusal(const char *name);
const char *offline_verdict_sources(void);
/* Every __x64_sys_* but `except`'s in one request; see targets.c. */
int attach_syscalls(char **attached, size_t *nattached, const char *const *except);
int attach_all_syscalls(void);
/* Attaches attachable names, `batch` a request (0: all in one), as
 * `kjitctl attach GLOB` does (attach.c); 0 when none was refused. */
int attach_bulk(struct names *s, size_t batch);

/* ---- results of the configured tool (results.c) -------------------------- */
unsigned long long unknown_departures(const struct kjit_ioc_stats *s);
void print_completion(FILE *out, const struct kjit_ioc_stats *s);
/* JSON (schema: docs/data-format.md, "JSON"; strings: json_escape.h) */
void json_str(const char *s);
/* Opens a document: {"schema_version": N, "document": "NAME" */
void json_begin(const char *document);
void json_open(const char *tool, const struct kjit_ioc_stats *completion);
struct pcnt { unsigned long long pc, count; };   /* aggregated, sorted by pc */
size_t aggregate(struct kjit_ioc_rec *recs, uint64_t n, struct pcnt *out);
enum { PCNT_TEXT, PCNT_JSON_DOCUMENT, PCNT_JSON_VALUE };   /* print_pcnt's json */
void print_pcnt(const char *what, struct pcnt *p, size_t n, int json, int nonzero, long long dropped);
long long dropped_of(const struct kjit_ioc_results *r);

/* ---- a growing byte buffer (buf.c) --------------------------------------- */
struct buf { unsigned char *p; size_t n, cap; };
void buf_put(struct buf *b, const void *v, size_t n);   /* exits when out of memory */
void buf_u32(struct buf *b, uint32_t v);
void buf_u64(struct buf *b, uint64_t v);

/* ---- the loaded modules (modules.c) -------------------------------------- */
/* Appends the MODULES section's text: "name base size build_id" lines. */
/* The GNU build id in the ELF notes at `path` (/sys/kernel/notes, a
 * module's notes in sysfs), as hex; "" when none. */
void note_build_id(const char *path, char *hex, size_t len);
void loaded_modules(struct buf *out);

/* ---- filters by task, perf's options (task_filters.c) -------------------- */
enum { OPT_TID = 512, OPT_COMM, OPT_CGROUP };
/* The filters' options, in a command's getopt_long table:
 *   {"all-cpus", no_argument, NULL, 'a'}, {"tid", required_argument, NULL, OPT_TID},
 *   {"comm", required_argument, NULL, OPT_COMM}, {"cgroup", required_argument, NULL, OPT_CGROUP},
 *   {"cpu", required_argument, NULL, 'C'}
 * and "aC:" in its short options. */
struct task_filters {
  int all;                 /* -a: every task (no pid filter) */
  pid_t tid;               /* --tid */
  const char *comm, *cgroup, *cpu_list;
  uint64_t cpus[4];        /* cpu_list as the module's bitmap */
};
/* 1 when opt is a filter's (stored in f), 0 when it is not, -1 after a
 * message when its argument is wrong. */
int task_filters_option(int opt, const char *arg, struct task_filters *f);
/* Whether a filter other than -a is given. */
int task_filters_narrow(const struct task_filters *f);
/* Fills cf's tid, comm, cgroup_fd (opened here) and cpus; 0, or -1 after a
 * message (no such thread, not a cgroup v2 directory). */
int task_filters_apply(const struct task_filters *f, struct kjit_ioc_config *cf);
/* "every task, comm X, CPUs 0-1" (pid: the pid filter, 0 for none). */
void task_filters_describe(const struct task_filters *f, pid_t pid, char *out, size_t len);

/* ---- a workload held until everything is armed (workload.c) ------------- */
pid_t spawn_held(char **cmdv, int *go_w, int own_group);
void release_held(int go_w);
/* waitpid(child, status, 0), except while the progress line is on
 * (stderr a terminal, progress.h): then it draws the line and returns 0
 * after 50 ms while the child runs. */
pid_t waitpid_progress(pid_t child, int *status);
/* Draws "DOING, kjit entered N times" when a redraw is due. */
void progress_entries(const char *doing);

/* ---- capture files (capture_file.c) -------------------------------------- */
struct capf_code { uint64_t pc; uint32_t len; const unsigned char *bytes; };
struct capf_code *capf_codes(const unsigned char *cob, uint64_t len, size_t *ncodes);
int capf_fixed_symbol(const char *name);
int capf_write(const char *path, const char *name, const unsigned char *ev, const unsigned char *evend,
               struct capf_code *codes, size_t ncodes, uint32_t cap_flags, const char *entry_name,
               int verbose);
/* One invocation of an event buffer: BEGIN .. END. */
struct capf_invocation {
  const unsigned char *begin, *end;   /* end: just after the END record */
  uint32_t end_reason;
  unsigned sleeps;                    /* its RESUME records */
};
int capf_next_invocation(const unsigned char **pos, const unsigned char *evend, struct capf_invocation *inv);
void capture_wait_done(unsigned timeout_s);
int capture_read(struct kjit_ioc_capture_read *r, unsigned char **evb, unsigned char **cob);

/* ---- kjitctl capture's two modes (capture.c, capture_all.c) -------------- */
struct capture_args {
  const char *sys, *func, *out;
  unsigned pid, count, timeout, buf_kb, code_kb;
  int timeout_set, first_complete, all_code;
  char **cmdv;   /* after --, or NULL */
};
int capture_all_syscalls(const struct capture_args *a);

/* ---- kjit.data (record_file.c) ------------------------------------------- */
struct record_info {
  const char *tool, *command;
  const char *filter;            /* which tasks (task_filters_describe) */
  const struct names *targets;   /* attached */
  const struct buf *verdicts;    /* TARGETS section text */
  pid_t pid;
  int status_known, status;      /* wait status */
  uint64_t t0, t1;
};
int record_write(const char *path, const struct record_info *in, const struct kjit_ioc_results *r,
                 const struct kjit_ioc_rec *recs, const struct kjit_ioc_stats *st);

#endif
