/* One CPG client for tomkit's Corosync recorder (tomkit/record/corosync/recorder.py).
 *
 * Joins the process group named by argv[1] through libcpg and writes what happens to it
 * on stdout, one JSON object a line, in the order it happens here (this process's local
 * order): "totem" (a ring was formed: ring id and nodes), "view" (CPG's configuration
 * change for the group: members, left and joined with reasons), "send" (just before
 * cpg_mcast_joined), "deliver" (CPG's deliver callback, in agreed order).
 * stdin: "go COUNT PAUSE_US\n" starts sending COUNT messages "n<nodeid>.<k>", one every
 * PAUSE_US microseconds, between dispatches; "quit\n" prints "leave", leaves the group
 * and exits.
 * Exits 3 when corosync goes away (its connection breaks).
 */
#include <corosync/cpg.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static unsigned int local_nodeid;
static unsigned long long ring_seq;
static unsigned int ring_node;

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

static void list(const char *key, const struct cpg_address *a, size_t n, int reasons) {
    printf(",\"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        if (reasons)
            printf("%s[\"n%u\",%u,%u]", i ? "," : "", a[i].nodeid, a[i].pid, a[i].reason);
        else
            printf("%s\"n%u\"", i ? "," : "", a[i].nodeid);
    }
    printf("]");
}

static void on_deliver(cpg_handle_t h, const struct cpg_name *g, uint32_t nodeid,
                       uint32_t pid, void *msg, size_t len) {
    (void)h; (void)g; (void)pid;
    printf("{\"ev\":\"deliver\",\"time\":%.6f,\"from\":\"n%u\",\"msg\":\"%.*s\"}\n", now(),
           nodeid, (int)len, (const char *)msg);
}

static void on_confchg(cpg_handle_t h, const struct cpg_name *g,
                       const struct cpg_address *members, size_t nm,
                       const struct cpg_address *left, size_t nl,
                       const struct cpg_address *joined, size_t nj) {
    (void)h; (void)g;
    printf("{\"ev\":\"view\",\"time\":%.6f,\"ring\":\"%u.%llu\"", now(), ring_node, ring_seq);
    list("members", members, nm, 0);
    list("left", left, nl, 1);
    list("joined", joined, nj, 1);
    printf("}\n");
}

static void on_totem(cpg_handle_t h, struct cpg_ring_id ring, uint32_t n,
                     const uint32_t *nodes) {
    (void)h;
    ring_node = ring.nodeid;
    ring_seq = ring.seq;
    printf("{\"ev\":\"totem\",\"time\":%.6f,\"ring\":\"%u.%llu\",\"nodes\":[", now(),
           ring.nodeid, (unsigned long long)ring.seq);
    for (uint32_t i = 0; i < n; i++) printf("%s\"n%u\"", i ? "," : "", nodes[i]);
    printf("]}\n");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: cpgclient GROUP\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    cpg_handle_t h;
    cpg_model_v1_data_t model = {
        .model = CPG_MODEL_V1, .cpg_deliver_fn = on_deliver, .cpg_confchg_fn = on_confchg,
        .cpg_totem_confchg_fn = on_totem, .flags = CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF};
    cs_error_t rc;
    for (int i = 0; (rc = cpg_model_initialize(&h, CPG_MODEL_V1, (cpg_model_data_t *)&model,
                                               NULL)) != CS_OK && i < 100; i++)
        usleep(100000);  /* corosync may still be starting */
    if (rc != CS_OK) {
        fprintf(stderr, "cpg_model_initialize: %d\n", rc);
        return 1;
    }
    struct cpg_name group;
    group.length = (uint32_t)strlen(argv[1]);
    memcpy(group.value, argv[1], group.length);
    if ((rc = cpg_join(h, &group)) != CS_OK) {
        fprintf(stderr, "cpg_join: %d\n", rc);
        return 1;
    }
    cpg_local_get(h, &local_nodeid);
    int fd;
    cpg_fd_get(h, &fd);
    printf("{\"ev\":\"ready\",\"time\":%.6f,\"node\":\"n%u\",\"pid\":%d}\n", now(),
           local_nodeid, (int)getpid());
    long count = 0, sent = 0, pause_us = 0;
    double next = 0;
    char line[256];
    size_t have = 0;
    for (;;) {
        struct pollfd fds[2] = {{fd, POLLIN, 0}, {0, POLLIN, 0}};
        int wait_ms = 1000;
        if (sent < count) {
            double d = (next - now()) * 1000;
            wait_ms = d < 0 ? 0 : (int)d + 1;
        }
        if (poll(fds, 2, wait_ms) < 0 && errno != EINTR) return 1;
        if (fds[0].revents) {
            rc = cpg_dispatch(h, CS_DISPATCH_ALL);
            if (rc != CS_OK && rc != CS_ERR_TRY_AGAIN) {
                printf("{\"ev\":\"lost\",\"time\":%.6f,\"rc\":%d}\n", now(), rc);
                return 3;
            }
        }
        if (fds[1].revents) {
            ssize_t r = read(0, line + have, sizeof line - 1 - have);
            if (r <= 0) break;
            have += (size_t)r;
            line[have] = 0;
            char *nl;
            while ((nl = strchr(line, '\n')) != NULL) {
                *nl = 0;
                if (sscanf(line, "go %ld %ld", &count, &pause_us) == 2) next = now();
                else if (strcmp(line, "quit") == 0) goto out;
                have -= (size_t)(nl + 1 - line);
                memmove(line, nl + 1, have + 1);
            }
        }
        if (sent < count && now() >= next) {
            char msg[64];
            int len = snprintf(msg, sizeof msg, "n%u.%ld", local_nodeid, sent);
            struct iovec iov = {msg, (size_t)len};
            printf("{\"ev\":\"send\",\"time\":%.6f,\"msg\":\"%s\"}\n", now(), msg);
            while ((rc = cpg_mcast_joined(h, CPG_TYPE_AGREED, &iov, 1)) == CS_ERR_TRY_AGAIN) {
                cpg_dispatch(h, CS_DISPATCH_ALL);  /* flow control: let deliveries drain */
                usleep(1000);
            }
            if (rc != CS_OK) {
                printf("{\"ev\":\"lost\",\"time\":%.6f,\"rc\":%d}\n", now(), rc);
                return 3;
            }
            sent++;
            next += pause_us / 1e6;
        }
    }
out:
    printf("{\"ev\":\"leave\",\"time\":%.6f}\n", now());
    cpg_leave(h, &group);
    cpg_finalize(h);
    return 0;
}
