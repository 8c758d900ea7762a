# syntax=docker/dockerfile:1

# gocached container image, run like the official memcached image:
#   docker build -t gocached .
#   docker run -d -p 11211:11211 gocached -m 64
#   docker run -d -p 11211:11211 gocached memcached -m 64   (the official image's form)
# Arguments go straight to gocached (ENTRYPOINT), so `docker run gocached -h`
# and `docker run gocached doctor` work too. The health check asks the server
# for its version on the default port (`gocached ping`). The epoll engine's NAPI knobs and
# busy-poll budgets above 64 need `--cap-add NET_ADMIN` (and usually
# `--network host` to see the real NIC's NAPIs).

FROM golang:1.26 AS build
WORKDIR /src
# Module downloads get their own layer, rebuilt only when go.mod/go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath \
        -ldflags="-s -w ${VERSION:+-X main.buildLabel=${VERSION}}" \
        -o /out/gocached ./cmd/gocached \
    && /out/gocached -V
# The same user as the official memcached image: memcache, uid/gid 11211.
RUN printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nmemcache:x:11211:11211:memcache:/nonexistent:/sbin/nologin\n' > /out/passwd \
    && printf 'root:x:0:\nnobody:x:65534:\nmemcache:x:11211:\n' > /out/group

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/group /etc/group
COPY --from=build /out/gocached /usr/local/bin/gocached
USER memcache:memcache
EXPOSE 11211
# The server writes its ports to memcached's port file, where the health
# check's `gocached ping` finds them (any -p); ping counts -Y, -S and -Z
# servers as up too.
ENV MEMCACHED_PORT_FILENAME=/tmp/gocached.ports
HEALTHCHECK --interval=30s --timeout=5s --retries=3 CMD ["gocached", "ping"]
ENTRYPOINT ["gocached"]
