/*
 * rezus/version.h - the plugin ABI version this SDK describes.
 *
 * A plugin records the values it was built with in its descriptor header; the host
 * loads it only when the majors are equal and the plugin's minor is not newer.
 */
#ifndef REZUS_VERSION_H
#define REZUS_VERSION_H

#define REZUS_ABI_MAJOR 1
#define REZUS_ABI_MINOR 3

#endif /* REZUS_VERSION_H */
