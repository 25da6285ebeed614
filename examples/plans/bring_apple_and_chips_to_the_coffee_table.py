def bring_apple_and_chips_to_the_coffee_table():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: grab the apple and the chips
	for item in ['apple', 'chips']:
		find(item)
		assert('close' to item )
			else: find(item)
		grab(item)
	# 2: walk to the coffee table
	walk('livingroom')
	find('coffeetable')
	# 3: put both on the coffee table
	for item in ['apple', 'chips']:
		assert(item in 'hands' )
			else: find(item)
			else: grab(item)
		putback(item, 'coffeetable')
	# 4: Done
